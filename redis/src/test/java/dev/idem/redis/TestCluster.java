package dev.idem.redis;

import dev.idem.testkit.LocalRedisCluster;
import java.nio.file.Path;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A 3-master {@link LocalRedisCluster} with a Redisson client on it, for one test class; skipped
 * when {@code redis-server} is missing, unless {@code IDEM_TESTKIT_REQUIRE} names {@code redis-cluster}.
 */
final class TestCluster implements AutoCloseable {

    final LocalRedisCluster cluster;
    final RedissonClient redisson;

    private TestCluster(LocalRedisCluster cluster, RedissonClient redisson) {
        this.cluster = cluster;
        this.redisson = redisson;
    }

    static TestCluster start() {
        LocalRedisCluster.assumeAvailable();
        LocalRedisCluster cluster = LocalRedisCluster.start(Path.of("target", "idem-testkit", "redis-cluster"), 3);
        Config config = new Config();
        config.useClusterServers().setNodeAddresses(cluster.nodeAddresses());
        return new TestCluster(cluster, Redisson.create(config));
    }

    /** Closes a cluster that may not have started (a skipped class). */
    static void stop(TestCluster started) {
        if (started != null) {
            started.close();
        }
    }

    @Override
    public void close() {
        redisson.shutdown();
        cluster.close();
    }
}
