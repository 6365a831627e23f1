package dev.idem.redis;

import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The whole claim store contract with every fresh claim compact, however few keys a call has. */
@IdemTestKit
class CompactRedisClaimStoreIT extends ClaimStoreContract {

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
                .doneWindow(doneWindow).minCompactBatch(1).build();
    }
}
