package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStoreException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * A Redis that answers late (a latency spike, {@code CLIENT PAUSE}): a claim call whose reply timed
 * out may still run once Redis goes on, so its keys are released as soon as Redis answers again, and
 * a copy is claimed within seconds, not after a whole lease held by an owner nobody renews.
 */
class SlowRedisIT {

    private static final Duration LEASE = Duration.ofSeconds(60);
    // Longer than the test client's timeout and its one retry (about two seconds).
    private static final long PAUSE_MILLIS = 4_000;

    private static OwnRedisServer server;
    private static RedissonClient redisson;

    @BeforeAll
    static void start() throws IOException {
        server = OwnRedisServer.start();
        redisson = server.client();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        redisson.shutdown();
        server.close();
    }

    private static void pause() throws IOException, InterruptedException {
        Process cli = new ProcessBuilder("redis-cli", "-p", Integer.toString(server.port()), "CLIENT", "PAUSE",
                Long.toString(PAUSE_MILLIS)).redirectErrorStream(true).start();
        assertThat(new String(cli.getInputStream().readAllBytes()).trim()).isEqualTo("OK");
        assertThat(cli.waitFor(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aClaimWhoseReplyTimedOutIsReleasedOnceRedisAnswersAgain() throws Exception {
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix("idem-slow:").build();
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-1");
        List<ClaimRequest> request = List.of(new ClaimRequest(key, 0));

        // Given a claim sent while Redis is paused: its reply times out, and Redis runs it later
        pause();
        long paused = System.nanoTime();
        assertThatThrownBy(() -> store.claim(request, "timed-out", LEASE)).isInstanceOf(ClaimStoreException.class);

        // When Redis answers again
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> redisson.getBucket("idem-slow:probe").get() == null);
        assertThat(Duration.ofNanos(System.nanoTime() - paused)).isLessThan(LEASE);

        // Then a copy is claimed within a few seconds (the failed call's keys released), not a lease later
        Claim copy = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                .until(() -> store.claim(request, "copy", LEASE).get(0), claim -> !(claim instanceof Claim.Busy));
        assertThat(copy).isInstanceOf(Claim.Claimed.class);
    }
}
