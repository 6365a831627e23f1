package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.testkit.LocalRedisCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Compact claims while their slot moves between masters (a resharding): the keys and their batch
 * record travel separately, and a key whose batch record is on the other node must never be taken
 * for done, nor changed by a script that then fails.
 */
class ClusterReshardIT {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static LocalRedisCluster cluster;
    private static RedissonClient redisson;

    @BeforeAll
    static void startCluster() {
        boolean required = String.valueOf(System.getenv("IDEM_TESTKIT_REQUIRE")).contains("redis-cluster");
        Assumptions.assumeTrue(required || LocalRedisCluster.available(),
                "redis-server is not on the PATH: no local Redis Cluster can be started");
        cluster = LocalRedisCluster.start(Path.of("target", "idem-testkit", "redis-cluster"), 3);
        Config config = new Config();
        config.useClusterServers().setNodeAddresses(cluster.nodeAddresses());
        redisson = Redisson.create(config);
    }

    @AfterAll
    static void stopCluster() {
        if (redisson != null) {
            redisson.shutdown();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Ten keys of one slot (a hash tag), claimed compact by {@code me}. */
    private static List<IdempotencyKey> claimedCompact(RedisClaimStore store, String owner, Duration lease) {
        String tag = "{reshard-" + UUID.randomUUID() + "}";
        List<IdempotencyKey> keys = IntStream.range(0, 10)
                .mapToObj(i -> new IdempotencyKey("inventory", "orders", tag + "order-" + i)).toList();
        assertThat(store.claim(requests(keys), owner, lease)).allMatch(c -> c instanceof Claim.Claimed);
        assertThat(redisson.<String>getBucket(store.redisKey(keys.get(0)),
                org.redisson.client.codec.StringCodec.INSTANCE).get()).as("claimed compact").startsWith("c");
        return keys;
    }

    private static List<ClaimRequest> requests(List<IdempotencyKey> keys) {
        return keys.stream().map(k -> new ClaimRequest(k, 0)).toList();
    }

    private static RedisClaimStore store(String prefix) {
        return RedisClaimStore.builder(redisson).keyPrefix(prefix).build();
    }

    @Test
    void keysReleasedWhileOnlyTheKeysMovedAreNotCompletedWithTheirBatch() {
        String prefix = "idem-reshard:" + UUID.randomUUID() + ":";
        RedisClaimStore store = store(prefix);
        List<IdempotencyKey> keys = claimedCompact(store, "me", LEASE);
        String[] redisKeys = keys.stream().map(store::redisKey).toArray(String[]::new);
        int slot = cluster.slotOf(redisKeys[0]);
        int from = cluster.nodeOf(slot);
        int to = (from + 1) % 3;

        // Given the slot half-moved: its keys on the new node, their batch record still on the old one
        cluster.beginMigration(slot, from, to);
        cluster.migrate(from, to, redisKeys);
        // When the owner releases three keys it never ran and completes the seven it ran
        store.release(keys.subList(7, 10), "me");
        Set<IdempotencyKey> refused = store.complete(keys.subList(0, 7), "me");
        cluster.migrateRest(slot, from, to);
        cluster.finishMigration(slot, to);

        // Then the seven are done, and the three are claimed again once the lease ends: never Done
        assertThat(refused).isEmpty();
        RedisClaimStore other = store(prefix);
        assertThat(other.claim(requests(keys.subList(0, 7)), "you", LEASE)).allMatch(c -> c instanceof Claim.Done);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(other.claim(requests(keys.subList(7, 10)), "you", LEASE))
                        .as("keys released, never run").allMatch(c -> c instanceof Claim.Claimed));
    }

    @Test
    void keysFailedWhileOnlyTheKeysMovedAreNotCompletedWithTheirBatch() {
        String prefix = "idem-reshard:" + UUID.randomUUID() + ":";
        RedisClaimStore store = store(prefix);
        List<IdempotencyKey> keys = claimedCompact(store, "me", LEASE);
        String[] redisKeys = keys.stream().map(store::redisKey).toArray(String[]::new);
        int slot = cluster.slotOf(redisKeys[0]);
        int from = cluster.nodeOf(slot);
        int to = (from + 1) % 3;

        cluster.beginMigration(slot, from, to);
        cluster.migrate(from, to, redisKeys);
        keys.subList(7, 10).forEach(key -> store.fail(key, "me", "boom"));
        Set<IdempotencyKey> refused = store.complete(keys.subList(0, 7), "me");
        cluster.migrateRest(slot, from, to);
        cluster.finishMigration(slot, to);

        assertThat(refused).isEmpty();
        RedisClaimStore other = store(prefix);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(other.claim(requests(keys.subList(7, 10)), "you", LEASE))
                        .as("keys that failed").allMatch(c -> c instanceof Claim.Claimed));
    }

    @Test
    void aCompletionMeetingABatchRecordThatMovedAwayChangesNothing() {
        String prefix = "idem-reshard:" + UUID.randomUUID() + ":";
        RedisClaimStore store = store(prefix);
        List<IdempotencyKey> keys = claimedCompact(store, "me", Duration.ofSeconds(30));
        String[] redisKeys = keys.stream().map(store::redisKey).toArray(String[]::new);
        int slot = cluster.slotOf(redisKeys[0]);
        int from = cluster.nodeOf(slot);
        int to = (from + 1) % 3;
        List<String> keysOnOld = cluster.keysInSlot(from, slot);
        String[] batchRecord = keysOnOld.stream().filter(k -> k.contains("batch")).toArray(String[]::new);
        assertThat(batchRecord).hasSize(1);

        // Given the batch record moved, its keys not yet
        cluster.beginMigration(slot, from, to);
        cluster.migrate(from, to, batchRecord);
        // When another owner (a store that never knew the batch) tries to complete two of the keys
        RedisClaimStore other = store(prefix);
        Set<IdempotencyKey> refused = other.complete(keys.subList(0, 2), "you");
        cluster.migrateRest(slot, from, to);
        cluster.finishMigration(slot, to);

        // Then both are refused and left as they were: still running under their owner's claim
        assertThat(refused).containsExactlyInAnyOrderElementsOf(keys.subList(0, 2));
        assertThat(store(prefix).claim(requests(keys.subList(0, 2)), "them", LEASE))
                .allMatch(c -> c instanceof Claim.Busy);
        assertThat(store.complete(keys, "me")).isEmpty();
    }
}
