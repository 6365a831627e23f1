package dev.idem.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

@IdemTestKit
class RedisSmokeIT {

    @Test
    void aKeySetIsReadBack(RedisEndpoint redis, TestNames names) {
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri().toString());
        RedissonClient client = Redisson.create(config);
        try {
            RBucket<String> bucket = client.getBucket(names.keyPrefix() + "smoke", StringCodec.INSTANCE);

            bucket.set("hello", Duration.ofMinutes(1));

            assertThat(bucket.get()).isEqualTo("hello");
            assertThat(bucket.remainTimeToLive()).isPositive();
        } finally {
            client.shutdown();
        }
    }
}
