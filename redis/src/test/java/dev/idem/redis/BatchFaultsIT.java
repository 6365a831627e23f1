package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Batch;
import dev.idem.core.DedupCheck;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.RecordingPublisher;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Batches under faults, in Redis-only mode (no business check), on real Redis: the narrower promise
 * (no two runs of one key at once, no re-run of a finished key while Redis keeps its data) must hold
 * through long batches, lost leases, crashes and concurrent closes.
 */
@IdemTestKit
class BatchFaultsIT {

    private static final Duration LEASE = Duration.ofMillis(600);
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

    private static List<Envelope> envelopes(String... bodies) {
        List<Envelope> list = new ArrayList<>();
        for (String body : bodies) {
            list.add(envelope(body));
        }
        return list;
    }

    /** Payload "key" or "key:slow" (sleeps 1.5 leases) or "key:crash" (the process dies). */
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final DeliveryHandler<String> handler = d -> {
        runs.computeIfAbsent(d.key().value(), k -> new AtomicInteger()).incrementAndGet();
        if (d.payload().endsWith(":slow")) {
            Thread.sleep(LEASE.toMillis() * 3 / 2);
        }
        if (d.payload().endsWith(":crash")) {
            throw new InternalError("the process dies here");
        }
    };

    private int runsOf(String key) {
        return runs.getOrDefault(key, new AtomicInteger()).get();
    }

    private IdempotentProcessor<String> processor(ClaimStore store, TestNames names, SimpleMeterRegistry meters) {
        return IdempotentProcessor.builder(handler).group(names.group()).claims(store).dedupCheck(DedupCheck.none())
                .deadLetters(new RecordingPublisher()).codec(PayloadCodec.utf8())
                .keys(KeySource.payload(p -> p.split(":")[0])).lease(LEASE).meterRegistry(meters).build();
    }

    private RedisClaimStore store(TestNames names) {
        return RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
    }

    /** A real Redis store whose lease renewals can be made to fail, as during a network partition. */
    private static ClaimStore renewalsFailWhen(ClaimStore store, AtomicBoolean failing) {
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
                    if (failing.get() && method.getName().startsWith("renew")) {
                        throw new ClaimStoreException("partitioned from Redis", null);
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private ClaimRecord.State state(RedisClaimStore store, TestNames names, String key) {
        return store.inspect(new IdempotencyKey(names.group(), "orders", key)).map(ClaimRecord::state).orElse(null);
    }

    @Test
    void aFinishedKeyStaysHeldWhileTheRestOfALongBatchRuns(TestNames names) throws Exception {
        // Given a batch whose first key finishes at once and whose second runs longer than a lease
        RedisClaimStore store = store(names);
        IdempotentProcessor<String> first = processor(store, names, new SimpleMeterRegistry());
        IdempotentProcessor<String> other = processor(store, names, new SimpleMeterRegistry());
        Batch<String> batch = first.open(envelopes("order-1", "order-2:slow"));
        assertThat(batch.process(0)).isInstanceOf(Outcome.Applied.class);
        CompletableFuture<Outcome> slow = CompletableFuture.supplyAsync(() -> batch.process(1));

        // When a duplicate of the first key reaches another consumer after its lease would have ended
        await().pollDelay(LEASE.multipliedBy(5).dividedBy(4)).until(() -> true);
        Outcome duplicate = other.process(envelope("order-1"));

        // Then it is busy, not run again; once the batch closes it is a duplicate
        assertThat(duplicate).isInstanceOf(Outcome.Busy.class);
        assertThat(slow.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        batch.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> other.process(envelope("order-1")) instanceof Outcome.Duplicate);
        assertThat(runsOf("order-1")).isEqualTo(1);
        first.close();
        other.close();
    }

    @Test
    void aKeyWhoseLeaseLapsedIsNotStartedWhenAnotherOwnerHoldsIt(TestNames names) throws Exception {
        // Given a batch whose lease renewals fail (a partition) while its first message runs long
        RedisClaimStore redis = store(names);
        AtomicBoolean partitioned = new AtomicBoolean(true);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        IdempotentProcessor<String> cut = processor(renewalsFailWhen(redis, partitioned), names, meters);
        IdempotentProcessor<String> other = processor(redis, names, new SimpleMeterRegistry());
        Batch<String> batch = cut.open(envelopes("order-1:slow", "order-2"));
        CompletableFuture<Outcome> slow = CompletableFuture.supplyAsync(() -> batch.process(0));

        // When another consumer takes the second key over after its lease ended, and holds it
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        IdempotentProcessor<String> holder = IdempotentProcessor.<String>builder(d -> {
                    runs.computeIfAbsent(d.key().value(), k -> new AtomicInteger()).incrementAndGet();
                    holding.countDown();
                    release.await(10, TimeUnit.SECONDS);
                }).group(names.group()).claims(redis).dedupCheck(DedupCheck.none())
                .deadLetters(new RecordingPublisher()).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .lease(Duration.ofSeconds(30)).build();
        CompletableFuture<Outcome> takeover = CompletableFuture.supplyAsync(() -> await().atMost(Duration.ofSeconds(5))
                .until(() -> holder.process(envelope("order-2")), o -> o instanceof Outcome.Applied));
        assertThat(holding.await(5, TimeUnit.SECONDS)).isTrue();
        Outcome firstOutcome = slow.get(5, TimeUnit.SECONDS);
        Outcome second = batch.process(1);

        // Then the first consumer does not start it (busy), and reports the lease it lost
        assertThat(second).isInstanceOf(Outcome.Busy.class);
        assertThat(runsOf("order-2")).isEqualTo(1);
        assertThat(firstOutcome).isInstanceOfSatisfying(Outcome.Applied.class, a -> assertThat(a.leaseLost()).isTrue());
        assertThat(meters.get("idem.lease.lost").counter().count()).isGreaterThanOrEqualTo(2);
        release.countDown();
        takeover.get(5, TimeUnit.SECONDS);
        batch.close();
        cut.close();
        other.close();
        holder.close();
    }

    @Test
    void aCrashOnOneMessageStillCompletesTheBatchsFinishedMessages(TestNames names) {
        // Given a batch where the first message is applied and the second crashes the consumer
        RedisClaimStore store = store(names);
        IdempotentProcessor<String> processor = processor(store, names, new SimpleMeterRegistry());
        Batch<String> batch = processor.open(envelopes("order-1", "order-2:crash", "order-3"));
        assertThat(batch.process(0)).isInstanceOf(Outcome.Applied.class);
        try {
            batch.process(1);
        } catch (InternalError crash) {
            // When the consumer abandons the batch on the error
            batch.abandon();
        }

        // Then the finished message is done, the crashed one keeps its claim (counted next time),
        // and the one never started is free
        await().atMost(Duration.ofSeconds(5)).until(() -> state(store, names, "order-1") == ClaimRecord.State.DONE);
        assertThat(state(store, names, "order-2")).isEqualTo(ClaimRecord.State.CLAIMED);
        assertThat(state(store, names, "order-3")).isEqualTo(ClaimRecord.State.FAILED);
        processor.close();
    }

    @Test
    void closingABatchWhileAnotherThreadRunsAMessageWaitsAndCompletesIt(TestNames names) throws Exception {
        RedisClaimStore store = store(names);
        IdempotentProcessor<String> processor = processor(store, names, new SimpleMeterRegistry());
        Batch<String> batch = processor.open(envelopes("order-1:slow"));
        CompletableFuture<Outcome> running = CompletableFuture.supplyAsync(() -> batch.process(0));
        await().atMost(Duration.ofSeconds(5)).until(() -> runsOf("order-1") == 1);

        batch.close();

        assertThat(running.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        await().atMost(Duration.ofSeconds(5)).until(() -> state(store, names, "order-1") == ClaimRecord.State.DONE);
        processor.close();
    }

    @Test
    void aValueUnderThePrefixThatIsNoClaimRecordHoldsBackOnlyItsOwnKey(TestNames names) {
        RedisClaimStore store = store(names);
        IdempotentProcessor<String> processor = processor(store, names, new SimpleMeterRegistry());
        redisson.getBucket(store.redisKey(new IdempotencyKey(names.group(), "orders", "order-1")),
                org.redisson.client.codec.StringCodec.INSTANCE).set("written by something else");

        List<Outcome> outcomes = new ArrayList<>();
        try (Batch<String> batch = processor.open(envelopes("order-1", "order-2"))) {
            outcomes.add(batch.process(0));
            outcomes.add(batch.process(1));
        }

        assertThat(outcomes.get(0)).isInstanceOf(Outcome.Deferred.class);
        assertThat(outcomes.get(1)).isInstanceOf(Outcome.Applied.class);
        processor.close();
    }

    @Test
    void aLongBatchCompletesItsFinishedKeysOnTheWaySoACrashCannotReRunThem(TestNames names) {
        // Given a batch that runs for longer than a second (its adapter commits offsets meanwhile)
        RedisClaimStore store = store(names);
        IdempotentProcessor<String> processor = processor(store, names, new SimpleMeterRegistry());
        Batch<String> batch = processor.open(envelopes("order-1", "order-2:slow", "order-3:slow", "order-4"));
        for (int i = 0; i < batch.size(); i++) {
            batch.process(i);
        }

        // When the process dies before closing the batch, the finished keys are done already
        await().atMost(Duration.ofSeconds(5)).until(() -> state(store, names, "order-1") == ClaimRecord.State.DONE
                && state(store, names, "order-2") == ClaimRecord.State.DONE);
        batch.close();
        processor.close();
    }
}
