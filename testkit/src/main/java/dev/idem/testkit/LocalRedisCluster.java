package dev.idem.testkit;

import dev.idem.testkit.internal.Ports;
import dev.idem.testkit.internal.Resp;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis Cluster of {@code redis-server} processes on loopback ports, one master per process and
 * no replicas, for tests of cluster behaviour (slots, cross-node batches). Needs {@code redis-server}
 * on the PATH. Close it to stop the processes. Not thread-safe.
 */
public final class LocalRedisCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LocalRedisCluster.class);
    private static final int SLOTS = 16384;
    // The cluster bus listens on port + 10000, so ports must stay below this.
    private static final int MAX_PORT = 55_000;
    private static final long READY_TIMEOUT_MILLIS = 30_000;

    private final List<Process> processes;
    private final List<Integer> ports;

    private LocalRedisCluster(List<Process> processes, List<Integer> ports) {
        this.processes = processes;
        this.ports = ports;
    }

    /** Whether {@code redis-server} is on the PATH. */
    public static boolean available() {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "redis-server"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Skips the calling test (a JUnit assumption) when {@code redis-server} is not on the PATH, unless
     * {@code IDEM_TESTKIT_REQUIRE} names {@code redis-cluster}: then the test runs and fails at start.
     * For the Cluster and the Sentinel fixtures alike.
     */
    public static void assumeAvailable() {
        boolean required = String.valueOf(System.getenv("IDEM_TESTKIT_REQUIRE")).contains("redis-cluster");
        Assumptions.assumeTrue(required || available(),
                "redis-server is not on the PATH: no local Redis Cluster or Sentinel can be started");
    }

    /**
     * Starts {@code masters} processes and joins them into one cluster covering all slots.
     *
     * @param workDir where node files and logs go (e.g. {@code target/redis-cluster})
     * @throws IllegalStateException if redis-server is missing or the cluster does not form in time
     */
    public static LocalRedisCluster start(Path workDir, int masters) {
        if (masters < 1) {
            throw new IllegalArgumentException("masters must be >= 1 but was " + masters);
        }
        if (!available()) {
            throw new IllegalStateException("redis-server is not on the PATH; install Redis to run cluster tests");
        }
        List<Process> processes = new ArrayList<>();
        List<Integer> ports = new ArrayList<>();
        LocalRedisCluster cluster = new LocalRedisCluster(processes, ports);
        try {
            Path dir = Files.createTempDirectory(Files.createDirectories(workDir), "cluster-");
            for (int port : clusterPorts(masters, Ports::free, Ports::isFree)) {
                ports.add(port);
                processes.add(new ProcessBuilder("redis-server", "--port", Integer.toString(port),
                        "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes-" + port + ".conf", "--cluster-node-timeout", "5000",
                        "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction",
                        "--dir", dir.toString())
                        .redirectErrorStream(true).redirectOutput(dir.resolve("redis-" + port + ".log").toFile())
                        .start());
            }
            for (int port : ports) {
                awaitReply(port, "PONG", "PING");
            }
            for (int i = 0; i < masters; i++) {
                int from = i * SLOTS / masters;
                int to = (i + 1) * SLOTS / masters;
                List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
                for (int slot = from; slot < to; slot++) {
                    command.add(Integer.toString(slot));
                }
                call(ports.get(i), command.toArray(String[]::new));
            }
            for (int i = 1; i < masters; i++) {
                call(ports.get(0), "CLUSTER", "MEET", "127.0.0.1", Integer.toString(ports.get(i)));
            }
            for (int port : ports) {
                awaitReply(port, "cluster_state:ok", "CLUSTER", "INFO");
            }
            LOG.info("Redis Cluster of {} masters on ports {}", masters, ports);
            return cluster;
        } catch (IOException e) {
            cluster.close();
            throw new UncheckedIOException("could not start the Redis Cluster", e);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Node addresses as {@code redis://127.0.0.1:port}, for Redisson's cluster configuration. */
    public List<String> nodeAddresses() {
        return ports.stream().map(port -> "redis://127.0.0.1:" + port).toList();
    }

    /** How many keys each node holds, in node order. */
    public List<Long> keysPerNode() {
        return ports.stream().map(port -> Long.parseLong(call(port, "DBSIZE").trim())).toList();
    }

    /** The hash slot of {@code key} ({@code CLUSTER KEYSLOT}). */
    public int slotOf(String key) {
        return Integer.parseInt(call(ports.get(0), "CLUSTER", "KEYSLOT", key).trim());
    }

    /** The index of the node that served {@code slot} when the cluster formed. */
    public int nodeOf(int slot) {
        int masters = ports.size();
        for (int i = 0; i < masters; i++) {
            if (slot < (i + 1) * SLOTS / masters) {
                return i;
            }
        }
        throw new IllegalArgumentException("slot must be below " + SLOTS + " but was " + slot);
    }

    /** The index of the node that serves {@code slot} now (after any migration), as node 0 sees it. */
    public int ownerOf(int slot) {
        return ownerOf(slot, 0);
    }

    /** The index of the node that serves {@code slot}, as node {@code viewer} sees it. */
    private int ownerOf(int slot, int viewer) {
        for (String line : call(ports.get(viewer), "CLUSTER", "NODES").split("\n")) {
            String[] fields = line.trim().split(" ");
            for (int i = 8; i < fields.length; i++) {
                String range = fields[i];
                if (range.startsWith("[")) {
                    continue;   // a migration in progress, not an owned range
                }
                int dash = range.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int to = Integer.parseInt(dash < 0 ? range : range.substring(dash + 1));
                if (slot >= from && slot <= to) {
                    int port = Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1, fields[1].indexOf('@')));
                    return ports.indexOf(port);
                }
            }
        }
        throw new IllegalStateException("no node of the cluster serves slot " + slot);
    }

    /**
     * Starts moving {@code slot} from node {@code from} to node {@code to} (indexes): the target
     * imports it, the source migrates it, and keys then move with {@link #migrate}. Clients meet
     * ASK and TRYAGAIN replies until {@link #finishMigration}.
     */
    public void beginMigration(int slot, int from, int to) {
        call(ports.get(to), "CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", nodeId(from));
        call(ports.get(from), "CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", nodeId(to));
    }

    /** Moves {@code keys} (of a slot being migrated) from node {@code from} to node {@code to}. */
    public void migrate(int from, int to, String... keys) {
        List<String> command = new ArrayList<>(List.of("MIGRATE", "127.0.0.1", Integer.toString(ports.get(to)), "",
                "0", "5000", "KEYS"));
        command.addAll(List.of(keys));
        call(ports.get(from), command.toArray(String[]::new));
    }

    /** Moves every key of {@code slot} still on node {@code from} to node {@code to}. */
    public void migrateRest(int slot, int from, int to) {
        List<String> keys = keysInSlot(from, slot);
        if (!keys.isEmpty()) {
            migrate(from, to, keys.toArray(String[]::new));
        }
    }

    /** The keys of {@code slot} held by node {@code node}. */
    public List<String> keysInSlot(int node, int slot) {
        String listed = call(ports.get(node), "CLUSTER", "GETKEYSINSLOT", Integer.toString(slot), "100000");
        return listed.isEmpty() ? List.of() : List.of(listed.split("\n"));
    }

    /**
     * Ends a migration: every node learns that node {@code to} serves {@code slot}, the new owner
     * first (it bumps its config epoch, so gossip from the old owner cannot win the slot back), as
     * Redis's own resharding does; returns once every node sees node {@code to} as the owner, so a
     * next migration of the slot starts from a settled cluster.
     *
     * @throws IllegalStateException if the nodes do not agree within 10 s
     */
    public void finishMigration(int slot, int to) {
        String owner = nodeId(to);
        call(ports.get(to), "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", owner);
        for (int i = 0; i < ports.size(); i++) {
            if (i != to) {
                call(ports.get(i), "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", owner);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!agreed(slot, to)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the nodes did not agree within 10 s that node " + to + " serves slot "
                        + slot);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the cluster settled slot " + slot, e);
            }
        }
    }

    /** Whether every node sees node {@code to} as the owner of {@code slot}. */
    private boolean agreed(int slot, int to) {
        for (int node = 0; node < ports.size(); node++) {
            if (ownerOf(slot, node) != to) {
                return false;
            }
        }
        return true;
    }

    private String nodeId(int node) {
        return call(ports.get(node), "CLUSTER", "MYID").trim();
    }

    @Override
    public void close() {
        Resp.stop(processes);
    }

    /**
     * Ports for {@code masters} nodes, each with its cluster bus port (port + 10000) free too, and no
     * node's port or bus port another's: the nodes start one after another, so a port chosen for one
     * is not bound yet when the next is chosen (a node once got the port that was another's bus port,
     * and that one aborted: "Failed listening on port ... (cluster)").
     */
    static List<Integer> clusterPorts(int masters, IntSupplier free, IntPredicate isFree) {
        List<Integer> ports = new ArrayList<>();
        Set<Integer> taken = new HashSet<>();
        for (int attempt = 0; ports.size() < masters; attempt++) {
            if (attempt == 100 * masters) {
                throw new IllegalStateException("no free loopback port pair for a cluster node");
            }
            int port = free.getAsInt();
            if (port < MAX_PORT && isFree.test(port + 10_000) && !taken.contains(port) && !taken.contains(port + 10_000)) {
                ports.add(port);
                taken.add(port);
                taken.add(port + 10_000);
            }
        }
        return ports;
    }

    private static void awaitReply(int port, String expected, String... command) {
        Resp.awaitReply(port, READY_TIMEOUT_MILLIS, expected, command);
    }

    private static String call(int port, String... command) {
        return Resp.call(port, command);
    }
}
