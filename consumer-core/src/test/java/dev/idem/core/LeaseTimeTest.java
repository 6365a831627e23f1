package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.memory.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A processor reads how long its leases hold from its {@link Ticker}: a lease that ran out while a
 * message waited in its batch, or while its handler ran, is noticed, and here without sleeping
 * through it. The story of each test: one consumer's first handler takes longer than the lease,
 * and another consumer takes the next key of the batch over meanwhile.
 */
class LeaseTimeTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final ManualClock time = new ManualClock(Instant.parse("2026-11-22T10:00:00Z"));
    private final InMemoryClaimStore store = new InMemoryClaimStore(time, Duration.ofDays(7), Duration.ofDays(1));
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    private IdempotentProcessor<String> processor(Ticker ticker, DeliveryHandler<String> slow) {
        DeliveryHandler<String> handler = delivery -> {
            runs.computeIfAbsent(delivery.payload(), k -> new AtomicInteger()).incrementAndGet();
            slow.handle(delivery);
        };
        return IdempotentProcessor.builder(handler).group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .deadLetters(new RecordingPublisher()).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .lease(LEASE).clock(time).ticker(ticker).build();
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, body, "orders-0@" + body, 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** Runs a batch of "a" and "b" in which a's handler outlives the lease while another consumer takes b. */
    private Outcome secondOfASlowBatch(Ticker ticker) {
        IdempotentProcessor<String> other = processor(Ticker.system(), delivery -> { });
        IdempotentProcessor<String> first = processor(ticker, delivery -> {
            if (delivery.payload().equals("a")) {
                time.advance(LEASE.plusSeconds(1));
                assertThat(other.process(envelope("b"))).isInstanceOf(Outcome.Applied.class);
            }
        });
        try (Batch<String> batch = first.open(List.of(envelope("a"), envelope("b")))) {
            batch.process(0);
            return batch.process(1);
        }
    }

    @Test
    void aKeyWhoseLeasePassedWhileItWaitedInItsBatchIsNotRunAgainAfterATakeover() {
        // Given a batch whose second key was taken over while the first handler outlived the lease
        Outcome second = secondOfASlowBatch(time);

        // Then its lease is confirmed before it runs, found lost, and the key's effect happened once
        assertThat(second).isNotInstanceOf(Outcome.Applied.class);
        assertThat(runs.get("b")).hasValue(1);
    }

    @Test
    void aTickerThatDoesNotSeeTheTimePassMissesTheTakeover() {
        // Given the same story told to a processor whose ticker does not move with the test's time
        Outcome second = secondOfASlowBatch(Ticker.system());

        // Then the lease looks fresh and b runs a second time: the first test's check is the ticker's
        assertThat(second).isInstanceOf(Outcome.Applied.class);
        assertThat(runs.get("b")).hasValue(2);
    }

    @Test
    void aHandlerThatOutlivesItsLeaseIsAppliedWithTheLeaseMarkedLost() {
        // Given a handler that runs longer than the lease
        IdempotentProcessor<String> processor = processor(time, delivery -> time.advance(LEASE.plusSeconds(1)));

        // When it finishes
        Outcome outcome = processor.process(envelope("a"));

        // Then the effect stands, and the outcome says another owner may have had the key meanwhile
        assertThat(outcome).isInstanceOfSatisfying(Outcome.Applied.class, applied ->
                assertThat(applied.leaseLost()).isTrue());
    }
}
