package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.memory.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Infrastructure trouble defers a message (not counted) with a growing delay, also where the broker
 * counts nothing (Kafka), and only up to {@code maxDeferral}: a message that can never succeed then
 * counts its failures and ends in the dead letter instead of blocking its partition.
 */
class DeferralTest {

    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-22T10:00:00Z"));
    private final InMemoryClaimStore store = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
    private final RecordingPublisher deadLetters = new RecordingPublisher();
    private final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private IdempotentProcessor.Builder<String> builder(DeliveryHandler<String> handler) {
        return IdempotentProcessor.builder(handler).group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .deadLetters(deadLetters).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .compensation(compensated::add).backoff(Backoff.exponential(Duration.ofSeconds(1),
                        Duration.ofMinutes(1), 0)).clock(clock).meterRegistry(registry);
    }

    /** A Kafka envelope: the broker gives no delivery count (0). */
    private static Envelope kafka(String body) {
        return new Envelope("orders", 0, "7", "orders-0@7", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void deferralsInARowBackOffFurtherEachTimeWithoutABrokerCount() {
        AtomicBoolean down = new AtomicBoolean(true);
        IdempotentProcessor<String> processor = builder(delivery -> {
            if (down.get()) {
                throw new ConnectException("stock service refused the connection");
            }
        }).build();

        List<Duration> delays = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Outcome outcome = processor.process(kafka("order-1"));
            assertThat(outcome).isInstanceOf(Outcome.Deferred.class);
            delays.add(outcome.disposition().delay());
            clock.advance(outcome.disposition().delay());
        }
        down.set(false);
        Outcome applied = processor.process(kafka("order-1"));
        down.set(true);
        Outcome nextKey = processor.process(kafka("order-2"));

        assertThat(delays).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4),
                Duration.ofSeconds(8));
        assertThat(applied).isInstanceOf(Outcome.Applied.class);
        assertThat(nextKey.disposition().delay()).as("another key starts its own row").isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void infrastructureTroublePastMaxDeferralCountsAndEndsInOneDeadLetterAndOneCompensation() {
        List<String> calls = new CopyOnWriteArrayList<>();
        IdempotentProcessor<String> processor = builder(delivery -> {
            calls.add(delivery.payload());
            throw new UnknownHostException("stock.internal.example: Name or service not known");
        }).maxDeferral(Duration.ofMinutes(10)).build();

        // Deferred, uncounted, for ten minutes
        List<Outcome> outcomes = new ArrayList<>();
        do {
            Outcome outcome = processor.process(kafka("order-1"));
            outcomes.add(outcome);
            clock.advance(outcome.disposition().delay());
        } while (outcomes.size() < 100 && !outcomes.get(outcomes.size() - 1).disposition().acknowledges());

        long deferred = outcomes.stream().filter(o -> o instanceof Outcome.Deferred).count();
        assertThat(deferred).as("deferred within the bound").isBetween(5L, 20L);
        assertThat(outcomes.subList((int) deferred, outcomes.size())).as("then counted: retried, then dead-lettered")
                .hasSize(5).last().isInstanceOf(Outcome.DeadLettered.class);
        assertThat(deadLetters.published()).hasSize(1);
        assertThat(deadLetters.published().get(0).exceptionClass()).isEqualTo(UnknownHostException.class.getName());
        assertThat(compensated).hasSize(1);
    }

    @Test
    void theOldestDeferralsAgeIsAGauge() {
        IdempotentProcessor<String> processor = builder(delivery -> {
            throw new ConnectException("refused");
        }).build();

        processor.process(kafka("order-1"));
        clock.advance(Duration.ofSeconds(90));
        processor.process(kafka("order-1"));

        assertThat(registry.get("idem.deferral.oldest.age").gauge().value()).isEqualTo(90.0);
    }
}
