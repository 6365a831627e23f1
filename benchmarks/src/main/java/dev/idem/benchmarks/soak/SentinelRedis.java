package dev.idem.benchmarks.soak;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.LocalRedisSentinel;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The soak's Redis under Sentinel: a primary and a replica, three Sentinels. Its fault is a failover
 * that loses writes: replication is held for a moment (the primary's last writes reach no replica),
 * what the replica holds then is read (it is what the failover keeps), the primary is killed, the
 * Sentinels promote the replica, and the killed server comes back empty as the new replica. Not
 * thread-safe: the chaos loop alone drives it.
 */
final class SentinelRedis implements SoakRedis {

    // How long the primary's writes reach no replica before it is killed: the writes a failover loses.
    private static final Duration HELD = Duration.ofMillis(300);
    // Each Sentinel starts a failover of a primary at most once per twice its failover timeout (2 x 120 s
    // here, the test kit's), so three of them fail over about every 80 s: one asked sooner would find
    // no Sentinel to start it (a run killed a primary 37 s after a failover, and none was promoted).
    private static final Duration MIN_GAP = Duration.ofSeconds(80);
    // A promotion normally takes 1.5 to 2.5 s; a Sentinel that aborted an attempt waits its delay.
    private static final Duration FAILOVER_LIMIT = Duration.ofMinutes(5);

    private final LocalRedisSentinel sentinel;
    private final String keyPrefix;
    private final String group;
    private final String topic;
    private final Supplier<Set<String>> sentIds;
    private final List<Loss> losses = new ArrayList<>();
    private int failovers;
    private long lastFailover;

    SentinelRedis(Path dir, String keyPrefix, String group, String topic, Supplier<Set<String>> sentIds) {
        this.sentinel = LocalRedisSentinel.start(dir);
        this.keyPrefix = keyPrefix;
        this.group = group;
        this.topic = topic;
        this.sentIds = sentIds;
    }

    @Override
    public String url() {
        return "redis-sentinel://" + String.join(",", sentinel.sentinelAddresses().stream()
                .map(address -> address.substring("redis://".length())).toList()) + "#" + LocalRedisSentinel.MASTER_NAME;
    }

    @Override
    public String fault(Random random) throws Exception {
        if (lastFailover != 0 && System.nanoTime() - lastFailover < MIN_GAP.toNanos()) {
            return "Sentinel failover skipped: less than " + MIN_GAP.toSeconds() + " s since the last one";
        }
        String held;
        Set<String> kept;
        Instant heldFrom = Instant.now();
        try {
            sentinel.holdReplication();
            TimeUnit.MILLISECONDS.sleep(HELD.toMillis());
            kept = doneOnReplica();
            held = "replication held " + HELD.toMillis() + " ms, " + sentinel.lostReplicationBytes() + " bytes lost";
        } catch (IllegalStateException notThroughTheProxy) {
            // The Sentinels pointed the replica at the primary itself: the kill loses what was in flight.
            kept = doneOnReplica();
            held = "replication not held (" + notThroughTheProxy.getMessage().split(":")[0] + ")";
            heldFrom = null;
        }
        Instant killedAt = Instant.now();
        sentinel.killPrimary();
        Duration promotion = sentinel.awaitFailover(FAILOVER_LIMIT);
        losses.add(new Loss(heldFrom == null ? killedAt : heldFrom, killedAt, kept));
        sentinel.rejoin();
        failovers++;
        lastFailover = System.nanoTime();
        return String.format("Sentinel failover: %s; primary killed; replica promoted after %d ms holding %d done ids; "
                + "the killed server back empty as replica", held, promotion.toMillis(), kept.size());
    }

    /** The ids whose claim record on the replica says done: what a failover now keeps. */
    private Set<String> doneOnReplica() throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + sentinel.replicaPort());
        RedissonClient replica = Redisson.create(config);
        ExecutorService readers = Executors.newFixedThreadPool(8);
        try {
            RedisClaimStore store = RedisClaimStore.builder(replica).keyPrefix(keyPrefix).build();
            Set<String> done = ConcurrentHashMap.newKeySet();
            List<Future<?>> reads = new ArrayList<>();
            for (String id : sentIds.get()) {
                reads.add(readers.submit(() -> store.inspect(new IdempotencyKey(group, topic, id))
                        .filter(record -> record.state() == ClaimRecord.State.DONE).ifPresent(record -> done.add(id))));
            }
            for (Future<?> read : reads) {
                read.get();
            }
            return done;
        } finally {
            readers.shutdownNow();
            replica.shutdown();
        }
    }

    @Override
    public String heal() {
        return null;   // a failover ends within its fault
    }

    @Override
    public boolean underWay() {
        return false;
    }

    @Override
    public int faults() {
        return failovers;
    }

    @Override
    public String faultName() {
        return "Sentinel failovers (writes lost)";
    }

    @Override
    public List<Loss> losses() {
        return List.copyOf(losses);
    }

    @Override
    public void close() {
        sentinel.close();
    }
}
