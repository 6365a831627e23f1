package dev.idem.redis;

import dev.idem.testkit.RedisEndpoint;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** A Redisson client on the test kit's Redis; the caller shuts it down. */
public final class TestRedisson {

    private TestRedisson() {
    }

    public static RedissonClient connect(RedisEndpoint redis) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri().toString());
        return Redisson.create(config);
    }
}
