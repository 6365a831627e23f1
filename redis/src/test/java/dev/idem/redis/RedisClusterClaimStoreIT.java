package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import dev.idem.testkit.LocalRedisCluster;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The whole claim store contract, plus cross-slot batches, on a 3-master Redis Cluster. */
class RedisClusterClaimStoreIT extends ClaimStoreContract {

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
    void aBatchSpreadOverEveryMasterIsClaimedAndCompletedAsOne() {
        ClaimStore store = newStore(Duration.ofDays(7));
        List<IdempotencyKey> keys = IntStream.range(0, 300)
                .mapToObj(i -> new IdempotencyKey("inventory", "orders", "order-" + i)).toList();
        List<ClaimRequest> requests = keys.stream().map(k -> new ClaimRequest(k, 0)).toList();

        List<Claim> claims = store.claim(requests, "me", Duration.ofSeconds(30));
        assertThat(store.complete(keys, "me")).isEmpty();

        assertThat(claims).extracting(Claim::key).containsExactlyElementsOf(keys);
        assertThat(claims).allMatch(c -> c instanceof Claim.Claimed);
        assertThat(store.claim(requests, "you", Duration.ofSeconds(30))).allMatch(c -> c instanceof Claim.Done);
        assertThat(cluster.keysPerNode()).as("keys land on every master").allMatch(count -> count > 0);
    }

    @Test
    void keysSharingASlotAreClaimedCompactAndCompletedByTheirSlotsBatchRecord() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        // A hash tag in the business key puts all of them in one slot: enough for a batch record.
        List<IdempotencyKey> tagged = IntStream.range(0, 10)
                .mapToObj(i -> new IdempotencyKey("inventory", "orders", "{customer-7}order-" + i)).toList();
        List<IdempotencyKey> spread = IntStream.range(0, 10)
                .mapToObj(i -> new IdempotencyKey("inventory", "orders", "order-" + i)).toList();
        List<IdempotencyKey> keys = new java.util.ArrayList<>(tagged);
        keys.addAll(spread);
        List<ClaimRequest> requests = keys.stream().map(k -> new ClaimRequest(k, 0)).toList();

        assertThat(store.claim(requests, "me", Duration.ofSeconds(30))).allMatch(c -> c instanceof Claim.Claimed);
        String compact = redisson.<String>getBucket(store.redisKey(tagged.get(0)),
                org.redisson.client.codec.StringCodec.INSTANCE).get();
        assertThat(compact).startsWith("b").hasSize(12);
        assertThat(redisson.<String>getBucket(store.redisKey(spread.get(0)),
                org.redisson.client.codec.StringCodec.INSTANCE).get()).startsWith("C|me|");
        assertThat(store.claim(requests, "you", Duration.ofSeconds(30))).allMatch(c -> c instanceof Claim.Busy);

        assertThat(store.complete(keys, "me")).isEmpty();

        assertThat(store.claim(requests, "you", Duration.ofSeconds(30))).allMatch(c -> c instanceof Claim.Done);
        assertThat(redisson.<String>getBucket(store.redisKey(tagged.get(3)),
                org.redisson.client.codec.StringCodec.INSTANCE).get()).isEqualTo(compact.substring(0, 10) + "03");
        assertThat(store.inspect(tagged.get(3)).orElseThrow().state())
                .isEqualTo(dev.idem.core.spi.ClaimRecord.State.DONE);
    }
}
