package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
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

    @Test
    void aDoneKeyIsAOneByteStringSoTheDedupWindowStaysSmall() {
        RedisClaimStore store = (RedisClaimStore) newStore(Duration.ofDays(7));
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-42:reserve");
        store.claim(List.of(new ClaimRequest(key, 0)), "a", Duration.ofSeconds(30));

        store.complete(List.of(key), "a");

        assertThat(redisson.<String>getBucket(store.redisKey(key), StringCodec.INSTANCE).get()).isEqualTo("D");
        assertThat(redisson.getBucket(store.redisKey(key)).remainTimeToLive()).isGreaterThan(Duration.ofDays(6).toMillis());
    }

    @Test
    void scriptsFlushedFromRedisAreLoadedAgain() {
        ClaimStore store = newStore(Duration.ofDays(7));
        redisson.getScript().scriptFlush();

        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-43");

        assertThat(store.claim(List.of(new ClaimRequest(key, 0)), "a", Duration.ofSeconds(30))).hasSize(1);
    }
}
