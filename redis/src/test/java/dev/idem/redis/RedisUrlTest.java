package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.redis.RedisUrl.Topology;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisUrlTest {

    @Test
    void oneServerWithCredentialsAndDatabase() {
        RedisUrl url = RedisUrl.parse("redis://ops:s%40cret@cache.internal:6380/3");

        assertThat(url).isEqualTo(new RedisUrl(Topology.SINGLE, List.of("redis://cache.internal:6380"), "ops",
                "s@cret", 3, null));
        assertThat(url.config().isSingleConfig()).isTrue();
    }

    @Test
    void aPasswordAloneAndTheDefaultPort() {
        assertThat(RedisUrl.parse("rediss://:pw@cache")).isEqualTo(new RedisUrl(Topology.SINGLE,
                List.of("rediss://cache:6379"), null, "pw", 0, null));
    }

    @Test
    void sentinelsWithThePrimaryNameAfterTheHash() {
        RedisUrl url = RedisUrl.parse("redis-sentinel://s1:26380,s2,s3:26381/2#orders-primary");

        assertThat(url).isEqualTo(new RedisUrl(Topology.SENTINEL,
                List.of("redis://s1:26380", "redis://s2:26379", "redis://s3:26381"), null, null, 2, "orders-primary"));
        assertThat(url.config().isSentinelConfig()).isTrue();
    }

    @Test
    void clusterSeedNodes() {
        RedisUrl url = RedisUrl.parse("rediss-cluster://u:p@n1:7000,n2:7001");

        assertThat(url).isEqualTo(new RedisUrl(Topology.CLUSTER, List.of("rediss://n1:7000", "rediss://n2:7001"), "u",
                "p", 0, null));
        assertThat(url.config().isClusterConfig()).isTrue();
    }

    @Test
    void anIpv6Host() {
        assertThat(RedisUrl.parse("redis://[::1]:6390").nodes()).containsExactly("redis://[::1]:6390");
    }

    @Test
    void wrongUrlsSayWhatIsWrongWithoutTheirCredentials() {
        assertThatThrownBy(() -> RedisUrl.parse("redis-sentinel://u:hunter2@s1,s2")).hasMessageContaining(
                "no primary name after '#'").hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> RedisUrl.parse("redis://a:1,b:2")).hasMessageContaining("more than one host");
        assertThatThrownBy(() -> RedisUrl.parse("redis-cluster://a/1")).hasMessageContaining("database 0 only");
        assertThatThrownBy(() -> RedisUrl.parse("cache:6379")).hasMessageContaining("no scheme");
        assertThatThrownBy(() -> RedisUrl.parse("http://cache")).hasMessageContaining("unknown scheme 'http'");
        assertThatThrownBy(() -> RedisUrl.parse("redis://cache:port")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> RedisUrl.parse("redis://:pw@")).hasMessageContaining("no host");
    }

    @Test
    void aPasswordHoldingReservedCharactersUnencodedIsStillTheWholePassword() {
        assertThat(RedisUrl.parse("redis://u:pa#ss@cache:6379").password()).isEqualTo("pa#ss");
        assertThat(RedisUrl.parse("redis-sentinel://admin:6380#x@h1,h2#orders")).satisfies(url -> {
            assertThat(url.password()).isEqualTo("6380#x");
            assertThat(url.primaryName()).isEqualTo("orders");
            assertThat(url.nodes()).containsExactly("redis://h1:26379", "redis://h2:26379");
        });
        assertThat(RedisUrl.parse("redis://u:p@ss/w@cache").password()).isEqualTo("p@ss/w");
    }

    @Test
    void noErrorMessageCarriesThePassword() {
        for (String url : new String[] {"redis://u:hunter2/x@cache:port", "redis://u:hunter2@ss@cache:port",
                ":hunter2@cache:6379", "redis://u:50%hunter2@cache", "redis-sentinel://u:hunter2@h1,h2"}) {
            assertThatThrownBy(() -> RedisUrl.parse(url)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageNotContaining("hunter2");
        }
        assertThat(RedisUrl.redacted("redis://u:p/w@ss@cache:6379")).isEqualTo("redis://cache:6379");
    }

    @Test
    void malformedHostListsAreRefused() {
        assertThat(RedisUrl.parse("redis-cluster://h1:7000, h2:7001").nodes())
                .containsExactly("redis://h1:7000", "redis://h2:7001");
        assertThatThrownBy(() -> RedisUrl.parse("redis-cluster://h1,h2,")).hasMessageContaining("empty host");
        assertThatThrownBy(() -> RedisUrl.parse("redis://::1")).hasMessageContaining("in brackets");
        assertThatThrownBy(() -> RedisUrl.parse("redis://h:70000")).hasMessageContaining("between 1 and 65535");
        assertThatThrownBy(() -> RedisUrl.parse("redis://h/-1")).hasMessageContaining(">= 0");
        assertThatThrownBy(() -> RedisUrl.parse("redis://h?timeout=1")).hasMessageContaining("query");
        assertThat(RedisUrl.parse("redis://u:@h").password()).isNull();
    }

    @Test
    void toStringKeepsThePasswordOut() {
        assertThat(RedisUrl.parse("redis://u:hunter2@h").toString()).doesNotContain("hunter2");
    }
}
