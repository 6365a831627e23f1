package dev.idem.redis;

import dev.idem.core.spi.CompensationOutcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import dev.idem.core.spi.ClaimAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

@IdemTestKit
class RedisClaimStoreIT extends ClaimStoreContract {

    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @Override
    protected ClaimStore newStore(Duration doneWindow) {
        return RedisClaimStore.builder(redisson).keyPrefix("idem-test:" + UUID.randomUUID() + ":")
                .doneWindow(doneWindow).build();
    }

    @Override
    protected void loseRecord(ClaimAdmin admin, IdempotencyKey key) {
        redisson.getKeys().delete(((RedisClaimStore) admin).redisKey(key));
    }

    @Test
    void aDoneKeyIsAOneByteStringSoTheDedupWindowStaysSmall() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-42:reserve");
        store.claim(List.of(new ClaimRequest(key, 0)), "a", Duration.ofSeconds(30));

        store.complete(List.of(key), "a");

        assertThat(redisson.<String>getBucket(store.redisKey(key), StringCodec.INSTANCE).get()).isEqualTo("D");
        assertThat(redisson.getBucket(store.redisKey(key)).remainTimeToLive()).isGreaterThan(Duration.ofDays(6).toMillis());
    }

    /**
     * A call's replies come back joined in one string by \30: a record whose error text holds one
     * (written before replies were joined, or by hand) still answers its own key and leaves the
     * others of the call theirs.
     */
    @Test
    void anErrorTextHoldingTheRepliesJoinerAnswersItsOwnKeyInACallOfSeveral() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        IdempotencyKey failed = new IdempotencyKey("inventory", "orders", "order-1");
        redisson.<String>getBucket(store.redisKey(failed), StringCodec.INSTANCE)
                .set("F||0|5|1|1|0|1700000000000|\u001fboom\u001ehere\u001f\u001f", Duration.ofMinutes(5));
        List<IdempotencyKey> keys = List.of(failed, new IdempotencyKey("inventory", "orders", "order-2"),
                new IdempotencyKey("inventory", "orders", "order-3"));

        List<Claim> claims = store.claim(keys.stream().map(k -> new ClaimRequest(k, 1)).toList(), "a",
                Duration.ofSeconds(30));

        assertThat(claims).hasSize(3).allMatch(Claim.Claimed.class::isInstance);
        assertThat(((Claim.Claimed) claims.get(0)).lastError()).contains("boom here");
        assertThat(((Claim.Claimed) claims.get(0)).failures()).isEqualTo(1);
        assertThat(claims.subList(1, 3)).allMatch(c -> ((Claim.Claimed) c).fresh());
    }

    /**
     * A key under the prefix that holds another type (a hash another application wrote there) answers
     * its own message as unreadable, whether the claim tries it fresh or reads it as a redelivery,
     * alone or in a call of several; the other keys of the call are claimed, and the hash is left as
     * it was.
     */
    @Test
    void aKeyHoldingAnotherTypeIsUnreadableAndTheOtherKeysOfItsCallAreClaimed() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        IdempotencyKey foreign = new IdempotencyKey("inventory", "orders", "order-1");
        redisson.<String, String>getMap(store.redisKey(foreign), StringCodec.INSTANCE).put("owner", "billing");

        for (int floor : new int[] {0, 2}) {
            List<IdempotencyKey> keys = List.of(foreign, new IdempotencyKey("inventory", "orders", "order-2-" + floor),
                    new IdempotencyKey("inventory", "orders", "order-3-" + floor));
            List<Claim> claims = store.claim(keys.stream().map(k -> new ClaimRequest(k, floor)).toList(), "a",
                    Duration.ofSeconds(30));

            assertThat(claims).as("floor %d", floor).hasSize(3);
            assertThat(claims.get(0)).isInstanceOf(Claim.Unreadable.class);
            assertThat(claims.subList(1, 3)).allMatch(Claim.Claimed.class::isInstance);
            assertThat(store.claim(List.of(new ClaimRequest(foreign, floor)), "b", Duration.ofSeconds(30)))
                    .singleElement().isInstanceOf(Claim.Unreadable.class);
        }
        assertThat(redisson.<String, String>getMap(store.redisKey(foreign), StringCodec.INSTANCE).readAllMap())
                .isEqualTo(Map.of("owner", "billing"));
    }

    /**
     * A key replaced by another type while its message ran is not completed and is left as it is; the
     * other keys of the completion are done. An epoch key of another type reads as a loss that has
     * just happened: the claim goes on, with the broker's count.
     */
    @Test
    void aCompletionOrAnEpochMeetingAKeyOfAnotherTypeAnswersThatKeyAloneAndLeavesIt() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        List<IdempotencyKey> keys = List.of(new IdempotencyKey("inventory", "orders", "order-1"),
                new IdempotencyKey("inventory", "orders", "order-2"), new IdempotencyKey("inventory", "orders", "order-3"));
        // Redeliveries: full records, completed key by key.
        assertThat(store.claim(keys.stream().map(k -> new ClaimRequest(k, 2)).toList(), "a", Duration.ofSeconds(30)))
                .allMatch(Claim.Claimed.class::isInstance);
        redisson.getKeys().delete(store.redisKey(keys.get(1)));
        redisson.<String, String>getMap(store.redisKey(keys.get(1)), StringCodec.INSTANCE).put("owner", "billing");

        assertThat(store.complete(keys, "a")).containsExactly(keys.get(1));

        assertThat(store.claim(List.of(new ClaimRequest(keys.get(0), 1), new ClaimRequest(keys.get(2), 1)), "b",
                Duration.ofSeconds(30))).allMatch(Claim.Done.class::isInstance);
        assertThat(redisson.<String, String>getMap(store.redisKey(keys.get(1)), StringCodec.INSTANCE).readAllMap())
                .isEqualTo(Map.of("owner", "billing"));

        String epoch = store.redisKey(keys.get(0)).replace("inventory:orders:order-1", "epoch");
        redisson.getKeys().delete(epoch);
        redisson.<String, String>getMap(epoch, StringCodec.INSTANCE).put("owner", "billing");
        List<IdempotencyKey> fresh = List.of(new IdempotencyKey("inventory", "orders", "order-4"),
                new IdempotencyKey("inventory", "orders", "order-5"));
        List<Claim> claims = store.claim(fresh.stream().map(k -> new ClaimRequest(k, 3, Instant.now().minusSeconds(1))).toList(), "a",
                Duration.ofSeconds(30));
        assertThat(claims).allSatisfy(c -> assertThat(((Claim.Claimed) c).attempt()).isEqualTo(3));
        assertThat(redisson.<String, String>getMap(epoch, StringCodec.INSTANCE).readAllMap())
                .isEqualTo(Map.of("owner", "billing"));
    }

    /**
     * Pending compensations come from an index, not a scan of the group's keys (a week of done keys
     * took minutes to hours to scan): no SCAN is sent, and an entry whose key was reset is dropped.
     */
    @Test
    void pendingCompensationsAreReadFromAnIndexWithoutScanningTheGroupsKeys() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        List<IdempotencyKey> done = new java.util.ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            done.add(new IdempotencyKey("inventory", "orders", "done-" + i));
        }
        store.claim(done.stream().map(k -> new ClaimRequest(k, 0)).toList(), "a", Duration.ofSeconds(30));
        store.complete(done, "a");
        IdempotencyKey cutOff = dead(store, "cut-off");
        IdempotencyKey running = dead(store, "running");
        IdempotencyKey finished = dead(store, "finished");
        store.recordCompensation(finished, "a", CompensationOutcome.OK);
        IdempotencyKey resetOne = dead(store, "reset");
        store.reset(resetOne);
        IdempotencyKey otherGroup = dead(store, new IdempotencyKey("billing", "orders", "other"));
        long scans = scans();

        List<IdempotencyKey> pending = store.pendingCompensations("inventory", 10).stream()
                .map(ClaimAdmin.KeyRecord::key).toList();

        assertThat(pending).containsExactlyInAnyOrder(cutOff, running);
        assertThat(scans()).as("SCAN calls").isEqualTo(scans);
        assertThat(redisson.getScoredSortedSet(store.redisKey(otherGroup).substring(0,
                store.redisKey(otherGroup).indexOf("billing")) + "pending", StringCodec.INSTANCE).size())
                .as("index entries left: the two pending and the other group's").isEqualTo(3);
    }

    private static IdempotencyKey dead(RedisClaimStore store, String value) {
        return dead(store, new IdempotencyKey("inventory", "orders", value));
    }

    private static IdempotencyKey dead(RedisClaimStore store, IdempotencyKey key) {
        store.claim(List.of(new ClaimRequest(key, 0)), "a", Duration.ofSeconds(30));
        store.doom(key, "a", "attempts exhausted", "boom");
        store.deadLetter(key, "a", Duration.ofSeconds(30));
        return key;
    }

    private static long scans() {
        String stats = redisson.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                .info(org.redisson.api.redisnode.RedisNode.InfoSection.COMMANDSTATS).get("cmdstat_scan");
        return stats == null ? 0 : Long.parseLong(stats.replaceAll("^calls=(\\d+),.*$", "$1"));
    }

    @Test
    void anAsynchronousCompletionRedisCannotTakeFailsItsFutureWithAClaimStoreException() throws Exception {
        try (OwnRedisServer server = OwnRedisServer.start()) {
            RedissonClient client = server.client();
            try {
                // Given a claimed key, then Redis goes away
                ClaimStore store = RedisClaimStore.builder(client).build();
                IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-44");
                store.claim(List.of(new ClaimRequest(key, 0)), "a", Duration.ofSeconds(30));
                server.down();

                // When the owner completes it without waiting
                CompletableFuture<Set<IdempotencyKey>> completion = store.completeAsync(List.of(key), "a");

                // Then the call returned, and the future fails as the SPI says: the caller retries or defers
                assertThatThrownBy(() -> completion.get(30, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(ClaimStoreException.class);
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void scriptsFlushedFromRedisAreLoadedAgain() {
        ClaimStore store = newStore(Duration.ofDays(7));
        redisson.getScript().scriptFlush();

        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-43");

        assertThat(store.claim(List.of(new ClaimRequest(key, 0)), "a", Duration.ofSeconds(30))).hasSize(1);
    }
}
