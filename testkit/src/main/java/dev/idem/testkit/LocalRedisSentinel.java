package dev.idem.testkit;

import dev.idem.testkit.internal.HoldingProxy;
import dev.idem.testkit.internal.Ports;
import dev.idem.testkit.internal.Resp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis primary with one replica, watched by three Sentinels, as {@code redis-server} processes on
 * loopback ports, for failover tests. The replica replicates through a proxy that a test can hold,
 * so that killing the primary then loses its last writes, as asynchronous replication does. Needs
 * {@code redis-server} on the PATH; close it to stop the processes. Not thread-safe.
 */
public final class LocalRedisSentinel implements AutoCloseable {

    /** The name the Sentinels monitor the primary under. */
    public static final String MASTER_NAME = "idem-primary";

    private static final Logger LOG = LoggerFactory.getLogger(LocalRedisSentinel.class);
    private static final int SENTINELS = 3;
    private static final long READY_TIMEOUT_MILLIS = 30_000;

    private final List<Process> processes = new ArrayList<>();
    // Kills the processes if the JVM ends without close(): no redis-server outlives its test run.
    private final Thread reaper = new Thread(() -> processes.forEach(Process::destroyForcibly), "redis-sentinel-reaper");
    private final List<Integer> sentinelPorts = new ArrayList<>();
    private Process primary;
    private Process replica;
    private int primaryPort;
    private int replicaPort;
    private HoldingProxy replication;
    private Path dir;

    // start() sets the processes, the proxy and the directory before it hands the instance out.
    @SuppressWarnings("NullAway.Init")
    private LocalRedisSentinel() {
    }

    /**
     * Starts the primary, its replica (in sync before this returns) and three Sentinels that agree
     * on the primary. A failover starts about a second after the primary stops answering.
     *
     * @param workDir where configuration files and logs go (e.g. {@code target/redis-sentinel})
     * @throws IllegalStateException if redis-server is missing or the set does not form in time
     */
    public static LocalRedisSentinel start(Path workDir) {
        if (!LocalRedisCluster.available()) {
            throw new IllegalStateException("redis-server is not on the PATH; install Redis to run Sentinel tests");
        }
        LocalRedisSentinel set = new LocalRedisSentinel();
        Runtime.getRuntime().addShutdownHook(set.reaper);
        try {
            Path dir = Files.createTempDirectory(Files.createDirectories(workDir), "sentinel-");
            set.dir = dir;
            set.primaryPort = Ports.free();
            set.primary = set.server(dir, set.primaryPort);
            Resp.awaitReply(set.primaryPort, READY_TIMEOUT_MILLIS, "PONG", "PING");
            set.replication = HoldingProxy.to(set.primaryPort);
            set.replicaPort = Ports.free();
            set.replica = set.server(dir, set.replicaPort, "--replicaof", "127.0.0.1",
                    Integer.toString(set.replication.port()));
            Resp.awaitReply(set.replicaPort, READY_TIMEOUT_MILLIS, "master_link_status:up", "INFO", "replication");
            for (int i = 0; i < SENTINELS; i++) {
                int port = Ports.free();
                Path conf = dir.resolve("sentinel-" + port + ".conf");
                // A long failover timeout: Sentinel would otherwise soon point the replica at the
                // primary's own port, around the proxy.
                Files.writeString(conf, String.join("\n",
                        "port " + port,
                        "bind 127.0.0.1",
                        "dir " + dir,
                        "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + set.primaryPort + " 2",
                        "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                        "sentinel failover-timeout " + MASTER_NAME + " 120000",
                        "sentinel parallel-syncs " + MASTER_NAME + " 1", ""));
                set.sentinelPorts.add(port);
                set.start(dir, port, conf.toString(), "--sentinel");
            }
            for (int port : set.sentinelPorts) {
                Resp.awaitReply(port, READY_TIMEOUT_MILLIS, "num-other-sentinels\n2", "SENTINEL", "MASTER", MASTER_NAME);
                Resp.awaitReply(port, READY_TIMEOUT_MILLIS, "num-slaves\n1", "SENTINEL", "MASTER", MASTER_NAME);
            }
            LOG.info("Redis primary on {}, replica on {} (through {}), Sentinels on {}", set.primaryPort,
                    set.replicaPort, set.replication.port(), set.sentinelPorts);
            return set;
        } catch (IOException e) {
            set.close();
            throw new UncheckedIOException("could not start Redis under Sentinel", e);
        } catch (RuntimeException e) {
            set.close();
            throw e;
        }
    }

    /** Sentinel addresses as {@code redis://127.0.0.1:port}, for Redisson's Sentinel configuration. */
    public List<String> sentinelAddresses() {
        return sentinelPorts.stream().map(port -> "redis://127.0.0.1:" + port).toList();
    }

    /** The port of the server the Sentinels name as primary now. */
    public int currentPrimaryPort() {
        String[] address = Resp.call(sentinelPorts.get(0), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
                .split("\n");
        return Integer.parseInt(address[1]);
    }

    /** The replica's port, to read what it holds (while replication is held, what a failover keeps). */
    public int replicaPort() {
        return replicaPort;
    }

    /**
     * Stops replicating: from now on the primary's writes reach no replica (the replica still
     * answers, and its link still reads as up). Use it within two minutes of {@link #start}: after
     * the Sentinels' failover timeout they point the replica at the primary itself, around the
     * proxy, and this then fails rather than hold nothing.
     *
     * @throws IllegalStateException if the replica no longer replicates through the proxy
     */
    public void holdReplication() {
        String info = Resp.call(replicaPort, "INFO", "replication");
        if (!info.contains("master_port:" + replication.port())) {
            throw new IllegalStateException("the replica no longer replicates through the proxy (the Sentinels "
                    + "reconfigured it): replication cannot be held; " + info.replace("\r\n", ", "));
        }
        replication.hold();
    }

    /** Bytes of replication stream the replica did not get since {@link #holdReplication()}. */
    public long lostReplicationBytes() {
        return replication.droppedBytes();
    }

    /** Kills the primary (SIGKILL): the Sentinels promote the replica with what it has. */
    public void killPrimary() {
        primary.destroyForcibly();
        try {
            primary.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        replication.close();
    }

    /**
     * Waits until every Sentinel names the replica as primary and it answers as one.
     *
     * @return how long that took
     */
    public Duration awaitFailover(Duration timeout) {
        long started = System.nanoTime();
        for (int port : sentinelPorts) {
            Resp.awaitReply(port, timeout.toMillis(), "\n" + replicaPort, "SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                    MASTER_NAME);
        }
        Resp.awaitReply(replicaPort, timeout.toMillis(), "role:master", "INFO", "replication");
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /**
     * After {@link #awaitFailover}: starts the killed primary again on its port, empty, as a replica of
     * the new primary through a new proxy, and waits until it is in sync, so the set can fail over
     * again (the two servers swap roles). Replication can be held again within two minutes of this.
     *
     * @throws IllegalStateException if it does not come in sync in time
     */
    public void rejoin() {
        int killedPort = primaryPort;
        primary = replica;
        primaryPort = replicaPort;
        replication = HoldingProxy.to(primaryPort);
        replicaPort = killedPort;
        try {
            replica = server(dir, replicaPort, "--replicaof", "127.0.0.1", Integer.toString(replication.port()));
        } catch (IOException e) {
            throw new UncheckedIOException("could not start redis-server on " + replicaPort, e);
        }
        Resp.awaitReply(replicaPort, READY_TIMEOUT_MILLIS, "master_link_status:up", "INFO", "replication");
        LOG.info("Redis primary on {}, replica on {} (through {}) again", primaryPort, replicaPort, replication.port());
    }

    private Process server(Path dir, int port, String... more) throws IOException {
        List<String> command = new ArrayList<>(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction",
                "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--dir", dir.toString()));
        command.addAll(List.of(more));
        return start(dir, port, command.toArray(String[]::new));
    }

    private Process start(Path dir, int port, String... arguments) throws IOException {
        List<String> command = new ArrayList<>(List.of("redis-server"));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis-" + port + ".log").toFile()).start();
        processes.add(process);
        return process;
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        if (replication != null) {
            replication.close();
        }
        Resp.stop(processes);
    }
}
