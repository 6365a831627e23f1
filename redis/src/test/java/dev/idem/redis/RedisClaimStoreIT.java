package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
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
