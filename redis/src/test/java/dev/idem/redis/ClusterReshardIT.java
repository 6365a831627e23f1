package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.testkit.LocalRedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Compact claims while their slot moves between masters (a resharding): the keys and their batch
 * record travel separately, and a key whose batch record is on the other node must never be taken
 * for done, nor changed by a script that then fails.
 */
class ClusterReshardIT {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static TestCluster started;
    private static LocalRedisCluster cluster;
    private static RedissonClient redisson;

    @BeforeAll
    static void startCluster() {
        started = TestCluster.start();
        cluster = started.cluster;
        redisson = started.redisson;
    }

    @AfterAll
    static void stopCluster() {
        TestCluster.stop(started);
    }

    /** Ten keys of one slot (a hash tag), claimed compact by {@code me}. */
    private static List<IdempotencyKey> claimedCompact(RedisClaimStore store, String owner, Duration lease) {
        String tag = "{reshard-" + UUID.randomUUID() + "}";
        List<IdempotencyKey> keys = IntStream.range(0, 10)
                .mapToObj(i -> new IdempotencyKey("inventory", "orders", tag + "order-" + i)).toList();
        assertThat(store.claim(requests(keys), owner, lease)).allMatch(c -> c instanceof Claim.Claimed);
        assertThat(redisson.<String>getBucket(store.redisKey(keys.get(0)),
                org.redisson.client.codec.StringCodec.INSTANCE).get()).as("claimed compact").startsWith("b");
        return keys;
    }

    private static List<ClaimRequest> requests(List<IdempotencyKey> keys) {
        return keys.stream().map(k -> new ClaimRequest(k, 0)).toList();
    }

    private static RedisClaimStore store(String prefix) {
        return RedisClaimStore.builder(redisson).keyPrefix(prefix).build();
    }

    /**
     * Ten keys claimed compact by "me"; with their slot half-moved (the keys on the new node, their
     * batch record on the old one) the owner gives up the last three ({@code giveUp}) and completes
     * the seven it ran (none refused); then the migration ends. Returns the keys.
     */
    private static List<IdempotencyKey> halfMovedSlot(RedisClaimStore store,
                                                      Consumer<List<IdempotencyKey>> giveUp) {
        List<IdempotencyKey> keys = claimedCompact(store, "me", LEASE);
        String[] redisKeys = keys.stream().map(store::redisKey).toArray(String[]::new);
        int slot = cluster.slotOf(redisKeys[0]);
        int from = cluster.nodeOf(slot);
        int to = (from + 1) % 3;

        cluster.beginMigration(slot, from, to);
        cluster.migrate(from, to, redisKeys);
        giveUp.accept(keys.subList(7, 10));
        assertThat(store.complete(keys.subList(0, 7), "me")).as("completions refused").isEmpty();
        cluster.migrateRest(slot, from, to);
        cluster.finishMigration(slot, to);
        return keys;
    }

    @Test
    void keysReleasedWhileOnlyTheKeysMovedAreNotCompletedWithTheirBatch() {
        String prefix = "idem-reshard:" + UUID.randomUUID() + ":";
        RedisClaimStore store = store(prefix);

        List<IdempotencyKey> keys = halfMovedSlot(store, released -> store.release(released, "me"));

        // The seven are done, and the three are claimed again once the lease ends: never Done
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

        List<IdempotencyKey> keys = halfMovedSlot(store, failed -> failed.forEach(key -> store.fail(key, "me", "boom")));

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

    /**
     * Claims flow while their slot is half-moved: a multi-key call on a migrating slot whose keys are
     * partly missing gets TRYAGAIN from Redis for as long as the migration lasts (minutes on a busy
     * cluster), so the slot's keys are claimed one by one then. A call that mixes that slot with
     * others claims every key, and leaves nothing claimed that its caller was not told of.
     */
    @Test
    void claimsFlowWhileTheirSlotIsHalfMoved() {
        String prefix = "idem-reshard:" + UUID.randomUUID() + ":";
        RedisClaimStore store = store(prefix);
        // Given a slot half-moved: ten keys claimed in it, five of them on the new node
        List<IdempotencyKey> earlier = claimedCompact(store, "me", Duration.ofSeconds(30));
        String tag = earlier.get(0).value().substring(0, earlier.get(0).value().indexOf('}') + 1);
        String[] redisKeys = earlier.stream().map(store::redisKey).toArray(String[]::new);
        int slot = cluster.slotOf(redisKeys[0]);
        int from = cluster.nodeOf(slot);
        int to = (from + 1) % 3;
        cluster.beginMigration(slot, from, to);
        try {
            cluster.migrate(from, to, java.util.Arrays.copyOf(redisKeys, 5));

            // When another owner claims new keys of that slot together with keys of other slots
            List<IdempotencyKey> fresh = new java.util.ArrayList<>();
            for (int i = 0; i < 10; i++) {
                fresh.add(new IdempotencyKey("inventory", "orders", tag + "new-" + i));
                fresh.add(new IdempotencyKey("inventory", "orders", "elsewhere-" + UUID.randomUUID()));
            }
            List<Claim> claims = store.claim(requests(fresh), "you", LEASE);
            List<Claim> again = store.claim(requests(earlier), "you", LEASE);

            // Then every new key is claimed, and the earlier ones are still "me"'s: busy, or unreadable
            // where a key moved without its batch record (decision 0035), never taken
            assertThat(claims).allMatch(c -> c instanceof Claim.Claimed);
            assertThat(again).allMatch(c -> c instanceof Claim.Busy || c instanceof Claim.Unreadable);
            // and a later call on the slot goes key by key at once: it is known to be migrating
            assertThat(store.claim(requests(List.of(new IdempotencyKey("inventory", "orders", tag + "later"))),
                    "you", LEASE)).allMatch(c -> c instanceof Claim.Claimed);
        } finally {
            cluster.migrateRest(slot, from, to);
            cluster.finishMigration(slot, to);
        }
    }
}
