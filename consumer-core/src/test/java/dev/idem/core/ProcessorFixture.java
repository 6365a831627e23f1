package dev.idem.core;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.memory.ManualClock;
import dev.idem.core.spi.ClaimRecord;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the processor tests share: an in-memory store on a clock the test moves, a dead-letter
 * publisher that records, and a handler whose payload says how it behaves.
 */
abstract class ProcessorFixture {

    static final Duration LEASE = Duration.ofSeconds(30);
    static final Duration BACKOFF = Duration.ofMillis(250);

    final ManualClock clock = new ManualClock(Instant.parse("2026-11-22T10:00:00Z"));
    final InMemoryClaimStore store = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
    final RecordingPublisher deadLetters = new RecordingPublisher();
    final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    final AtomicInteger handled = new AtomicInteger();

    /** Payloads are "key" or "key:fail" (always throws) or "key:fatal". */
    final DeliveryHandler<String> handler = delivery -> {
        handled.incrementAndGet();
        if (delivery.payload().endsWith(":fail")) {
            throw new IOException("stock service unavailable");
        }
        if (delivery.payload().endsWith(":fatal")) {
            throw new NonRetryableException("unknown product");
        }
    };

    /** A ledger that finds nothing and whose rows no handler writes (as the JDBC ledger for a handler not its own). */
    static EffectLedger<Object> ledgerItsHandlerCannotWrite() {
        return new EffectLedger<>() {
            @Override
            public boolean alreadyApplied(Delivery<?> delivery) {
                return false;
            }

            @Override
            public boolean recordedBy(DeliveryHandler<?> handler) {
                return false;
            }
        };
    }

    IdempotentProcessor.Builder<String> builder(DeliveryHandler<String> handler) {
        return IdempotentProcessor.builder(handler)
                .group("inventory")
                .claims(store)
                .dedupCheck(DedupCheck.none())
                .deadLetters(deadLetters)
                .codec(PayloadCodec.utf8())
                .keys(KeySource.payload(payload -> payload.split(":")[0]))
                .compensation(compensated::add)
                .backoff(Backoff.fixed(BACKOFF))
                .lease(LEASE)
                .clock(clock)
                .meterRegistry(new SimpleMeterRegistry());
    }

    IdempotentProcessor<String> processor() {
        return builder(handler).build();
    }

    static Envelope envelope(String body) {
        return envelope(body, 0);
    }

    static Envelope envelope(String body, int brokerAttempt) {
        return new Envelope("orders", 0, "7", "orders-0@7", brokerAttempt, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    ClaimRecord record(String key) {
        return store.inspect(new IdempotencyKey("inventory", "orders", key)).orElseThrow();
    }
}
