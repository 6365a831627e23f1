package dev.idem.redis;

import dev.idem.core.RecordingPublisher;
import dev.idem.core.Outcome;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Envelope;
import dev.idem.core.DeliveryHandler;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.redis.RedisClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.DedupCheck;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import dev.idem.redis.TestRedisson;
import org.redisson.api.RedissonClient;

@IdemTestKit
class LeaseRenewalIT {

    private static final Duration LEASE = Duration.ofMillis(300);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    private IdempotentProcessor<String> processor(RedisClaimStore store, TestNames names, DeliveryHandler<String> h) {
        return IdempotentProcessor.builder(h).group(names.group()).claims(store).dedupCheck(DedupCheck.none())
                .deadLetters(new RecordingPublisher()).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .lease(LEASE).meterRegistry(new SimpleMeterRegistry()).build();
    }

    @Test
    void aHandlerRunningFarLongerThanTheLeaseKeepsItsClaim(TestNames names) throws Exception {
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        IdempotentProcessor<String> processor = processor(store, names, d -> {
            running.countDown();
            finish.await(10, TimeUnit.SECONDS);
        });
        IdempotencyKey key = new IdempotencyKey(names.group(), "orders", "order-1");

        CompletableFuture<Outcome> outcome = CompletableFuture.supplyAsync(() -> processor.process(envelope("order-1")));
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();

        // For five leases' time, a competing consumer keeps finding the key busy.
        await().during(LEASE.multipliedBy(5)).atMost(LEASE.multipliedBy(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> store.claim(List.of(new ClaimRequest(key, 0)), "competitor", LEASE).get(0)
                        instanceof Claim.Busy);
        finish.countDown();

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(Outcome.Applied.class,
                applied -> assertThat(applied.leaseLost()).isFalse());
        processor.close();
    }

    @Test
    void aLeaseLostWhileTheHandlerRunsIsVisibleInTheOutcome(TestNames names) throws Exception {
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        IdempotentProcessor<String> processor = processor(store, names, d -> {
            running.countDown();
            finish.await(10, TimeUnit.SECONDS);
        });
        IdempotencyKey key = new IdempotencyKey(names.group(), "orders", "order-2");

        CompletableFuture<Outcome> outcome = CompletableFuture.supplyAsync(() -> processor.process(envelope("order-2")));
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        // Redis loses the record (failover, flush) and another consumer claims the key.
        store.reset(key);
        assertThat(store.claim(List.of(new ClaimRequest(key, 0)), "competitor", Duration.ofSeconds(30)).get(0))
                .isInstanceOf(Claim.Claimed.class);
        await().atMost(Duration.ofSeconds(3)).pollDelay(LEASE).until(() -> true);
        finish.countDown();

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(Outcome.Applied.class,
                applied -> assertThat(applied.leaseLost()).isTrue());
        assertThat(store.inspect(key).orElseThrow().owner()).as("completion refused to the stale owner")
                .contains("competitor");
        processor.close();
    }

    @Test
    void twentyOwnersOfThirtyTwoKeysEachKeepEveryLeaseAndARenewalRoundIsMeasured(TestNames names) throws Exception {
        // Given 20 batches of 32 keys held by one processor with a short lease
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        IdempotentProcessor<String> processor = processor(store, names, d -> { });
        List<dev.idem.core.Batch<String>> batches = new java.util.ArrayList<>();
        for (int b = 0; b < 20; b++) {
            List<Envelope> envelopes = new java.util.ArrayList<>();
            for (int k = 0; k < 32; k++) {
                envelopes.add(envelope("b" + b + "-k" + k));
            }
            batches.add(processor.open(envelopes));
        }

        // When they are held for many leases, then a competitor tries every key
        await().pollDelay(LEASE.multipliedBy(6)).until(() -> true);
        List<ClaimRequest> all = new java.util.ArrayList<>();
        for (int b = 0; b < 20; b++) {
            for (int k = 0; k < 32; k++) {
                all.add(new ClaimRequest(new IdempotencyKey(names.group(), "orders", "b" + b + "-k" + k), 0));
            }
        }

        // Then every key is still held
        assertThat(store.claim(all, "competitor", LEASE)).allMatch(c -> c instanceof Claim.Busy);
        batches.forEach(dev.idem.core.Batch::close);
        processor.close();

        // And one renewal round (20 owners x 32 keys, sent at once) takes this long on this machine
        List<Long> rounds = new java.util.ArrayList<>();
        List<List<IdempotencyKey>> owned = new java.util.ArrayList<>();
        for (int b = 0; b < 20; b++) {
            List<ClaimRequest> requests = all.subList(b * 32, b * 32 + 32).stream()
                    .map(r -> new ClaimRequest(new IdempotencyKey(names.group(), "measure", r.key().value()), 0)).toList();
            store.claim(requests, "owner-" + b, Duration.ofSeconds(30));
            owned.add(requests.stream().map(ClaimRequest::key).toList());
        }
        for (int round = 0; round < 50; round++) {
            long start = System.nanoTime();
            List<CompletableFuture<java.util.Set<IdempotencyKey>>> sent = new java.util.ArrayList<>();
            for (int b = 0; b < 20; b++) {
                sent.add(store.renewAsync(owned.get(b), "owner-" + b, Duration.ofSeconds(30)));
            }
            for (CompletableFuture<java.util.Set<IdempotencyKey>> renewal : sent) {
                assertThat(renewal.get(5, TimeUnit.SECONDS)).isEmpty();
            }
            rounds.add(System.nanoTime() - start);
        }
        java.util.Collections.sort(rounds);
        org.slf4j.LoggerFactory.getLogger(LeaseRenewalIT.class).info(
                "renewal round, 20 owners x 32 keys: median {} ms, max {} ms over {} rounds",
                String.format("%.2f", rounds.get(rounds.size() / 2) / 1e6),
                String.format("%.2f", rounds.get(rounds.size() - 1) / 1e6), rounds.size());
        assertThat(rounds.get(rounds.size() / 2)).isLessThan(LEASE.toNanos() / 3);
    }
}
