package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The whole claim store contract with every fresh claim compact, however few keys a call has. */
@IdemTestKit
class CompactRedisClaimStoreIT extends ClaimStoreContract {

    private static RedissonClient redisson;
    private String prefix;

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
        prefix = "idem-test:" + UUID.randomUUID() + ":";
        return RedisClaimStore.builder(redisson).keyPrefix(prefix).doneWindow(doneWindow).minCompactBatch(1).build();
    }

    /** A compact key and its batch record are written together, so a failover loses both. */
    @Override
    protected void loseRecord(ClaimAdmin admin, IdempotencyKey key) {
        String redisKey = ((RedisClaimStore) admin).redisKey(key);
        String value = (String) redisson.getBucket(redisKey, StringCodec.INSTANCE).get();
        assertThat(value).as("a compact claim").startsWith("b");
        // On a single server a slot group's batch records are under one prefix (KeySpace.batchPrefix).
        assertThat(redisson.getKeys().delete(redisKey, prefix + "batch:" + value.substring(1, 1 + BatchIds.LENGTH))).isEqualTo(2);
    }
}
