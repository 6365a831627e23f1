package dev.idem.micronaut;

import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Reads Idem's claim records from the test kit's Redis, after an application has stopped. */
final class ClaimsAfterStop {

    private ClaimsAfterStop() {
    }

    /** Waits until {@code key}'s claim record says done (a completion is sent without waiting). */
    static void awaitDone(RedisEndpoint redis, String keyPrefix, IdempotencyKey key, Duration timeout) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri().toString());
        RedissonClient redisson = Redisson.create(config);
        try {
            RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(keyPrefix).build();
            await().atMost(timeout).until(() -> store.inspect(key)
                    .map(r -> r.state() == ClaimRecord.State.DONE).orElse(false));
        } finally {
            redisson.shutdown();
        }
    }
}
