package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.RedisUrl;
import dev.idem.testkit.LocalRedisCluster;
import dev.idem.testkit.LocalRedisSentinel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

/**
 * The command line reaches claims in a Redis Cluster and under Sentinel through one URL, the form
 * {@link RedisUrl} reads: it shows a running claim and resets it.
 */
class RedisTopologiesIT {

    private static final Path WORK = Path.of("target", "idem-testkit");

    @BeforeEach
    void needsRedisServer() {
        LocalRedisCluster.assumeAvailable();
    }

    @Test
    void showsAndResetsAClaimInARedisCluster(@TempDir Path home) {
        try (LocalRedisCluster cluster = LocalRedisCluster.start(WORK.resolve("redis-cluster"), 3)) {
            String seeds = String.join(",", cluster.nodeAddresses().subList(0, 2)).replace("redis://", "");
            showAndReset("redis-cluster://" + seeds, home);
        }
    }

    @Test
    void showsAndResetsAClaimUnderSentinel(@TempDir Path home) {
        try (LocalRedisSentinel sentinel = LocalRedisSentinel.start(WORK.resolve("redis-sentinel"))) {
            String sentinels = String.join(",", sentinel.sentinelAddresses()).replace("redis://", "");
            showAndReset("redis-sentinel://" + sentinels + "#" + LocalRedisSentinel.MASTER_NAME, home);
        }
    }

    private static void showAndReset(String url, Path home) {
        String prefix = "idem-topologies:" + UUID.randomUUID() + ":";
        RedissonClient redisson = Redisson.create(RedisUrl.parse(url).config());
        try {
            RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(prefix).build();
            IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-7");
            store.claim(List.of(new ClaimRequest(key, 0)), "worker-1", Duration.ofMinutes(5));
            Operator operator = new Operator(Map.of("IDEM_REDIS_URL", url, "IDEM_KEY_PREFIX", prefix), home);

            Operator.Run show = operator.idem("claims", "show", "inventory", "order-7", "-t", "orders");
            Operator.Run reset = operator.idem("claims", "reset", "inventory", "order-7", "-t", "orders", "--yes",
                    "--force");

            assertThat(show.code()).as(show.toString()).isZero();
            assertThat(show.out()).contains("worker-1");
            assertThat(reset.code()).as(reset.toString()).isZero();
            assertThat(store.inspect(key)).isEmpty();
        } finally {
            redisson.shutdown();
        }
    }
}
