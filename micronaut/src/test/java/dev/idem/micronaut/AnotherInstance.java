package dev.idem.micronaut;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.RedisEndpoint;
import java.time.Duration;
import java.util.List;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Holds one key's claim in the test kit's Redis, as a consumer in another process would, until closed. */
final class AnotherInstance implements AutoCloseable {

    private static final String OWNER = "another-instance";

    private final RedissonClient redisson;
    private final RedisClaimStore store;
    private final IdempotencyKey key;
    private boolean closed;

    private AnotherInstance(RedissonClient redisson, RedisClaimStore store, IdempotencyKey key) {
        this.redisson = redisson;
        this.store = store;
        this.key = key;
    }

    /** Claims {@code key} for {@code lease}; fails if the key is not free. */
    static AnotherInstance holding(RedisEndpoint redis, String keyPrefix, IdempotencyKey key, Duration lease) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri().toString());
        RedissonClient redisson = Redisson.create(config);
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(keyPrefix).build();
        List<Claim> claims = store.claim(List.of(new ClaimRequest(key, 0)), OWNER, lease);
        if (!(claims.get(0) instanceof Claim.Claimed)) {
            redisson.shutdown();
            throw new IllegalStateException("expected to claim " + key + " but got " + claims.get(0));
        }
        return new AnotherInstance(redisson, store, key);
    }

    /** Releases the claim unrun, as a consumer that gave the message back would, and disconnects; once. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            store.release(List.of(key), OWNER);
        } finally {
            redisson.shutdown();
        }
    }
}
