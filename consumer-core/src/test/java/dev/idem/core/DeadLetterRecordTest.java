package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.memory.ManualClock;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.CompensationOutcome;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A dead letter the business check could not record: acknowledged only once it is recorded (or the
 * bound passes), never compensated twice, and copies of other dead keys cost no write.
 */
class DeadLetterRecordTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-22T10:00:00Z"));
    private final InMemoryClaimStore memory = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
    private final AtomicBoolean storeFailsRecording = new AtomicBoolean();
    private final AtomicBoolean checkDown = new AtomicBoolean();
    private final AtomicInteger recordings = new AtomicInteger();
    private final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();

    /** The in-memory store, whose recording of a compensation's outcome fails while asked to. */
    private ClaimStore store() {
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("recordCompensation") && storeFailsRecording.get()) {
                        throw new ClaimStoreException("Redis timed out (test)", null);
                    }
                    try {
                        return method.invoke(memory, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** A business check that remembers dead letters, failing to record compensations while down. */
    private final EffectLedger<String> check = new EffectLedger<>() {
        @Override
        public boolean alreadyApplied(Delivery<? extends String> delivery) {
            return false;
        }

        @Override
        public void compensated(DeadLetter deadLetter, CompensationOutcome outcome) throws Exception {
            recordings.incrementAndGet();
            if (checkDown.get()) {
                throw new java.sql.SQLTransientConnectionException("ledger down (test)");
            }
        }
    };

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(d -> {
                    throw new NonRetryableException("unknown product");
                }).group("inventory").claims(store()).dedupCheck(check).deadLetters(new RecordingPublisher())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).compensation(compensated::add)
                .lease(LEASE).clock(clock).maxDeferral(Duration.ofMinutes(10)).build();
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void whenNeitherTheStoreNorTheCheckRecordTheCompensationItIsAcknowledgedSoNoCopyRunsItAgain() {
        IdempotentProcessor<String> processor = processor();
        storeFailsRecording.set(true);
        checkDown.set(true);

        Outcome outcome = processor.process(envelope("order-1"));

        // A copy would find the compensation pending and run it again: acknowledged, as before.
        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(compensated).hasSize(1);
    }

    @Test
    void aCompensationTheCheckCouldNotRecordIsRecordedByACopyThenAcknowledged() {
        IdempotentProcessor<String> processor = processor();
        checkDown.set(true);

        Outcome first = processor.process(envelope("order-1"));
        Outcome whileDown = processor.process(envelope("order-1"));
        checkDown.set(false);
        Outcome afterwards = processor.process(envelope("order-1"));

        assertThat(first).isInstanceOf(Outcome.Deferred.class);
        assertThat(whileDown).isInstanceOf(Outcome.Deferred.class);
        assertThat(afterwards).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(compensated).as("compensated once").hasSize(1);
    }

    @Test
    void aCheckThatNeverRecordsHoldsTheCopiesOnlyForMaxDeferral() {
        IdempotentProcessor<String> processor = processor();
        checkDown.set(true);

        Outcome first = processor.process(envelope("order-1"));
        clock.advance(Duration.ofMinutes(5));
        Outcome within = processor.process(envelope("order-1"));
        clock.advance(Duration.ofMinutes(6));
        Outcome past = processor.process(envelope("order-1"));

        assertThat(first).isInstanceOf(Outcome.Deferred.class);
        assertThat(within).isInstanceOf(Outcome.Deferred.class);
        assertThat(past).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(compensated).hasSize(1);
    }

    @Test
    void copiesOfADeadKeyRecordedInTimeCostTheCheckNothing() {
        IdempotentProcessor<String> processor = processor();
        processor.process(envelope("order-1"));
        int afterTheDeadLetter = recordings.get();

        for (int i = 0; i < 5; i++) {
            assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.DeadLettered.class);
        }

        assertThat(recordings.get()).isEqualTo(afterTheDeadLetter);
    }
}
