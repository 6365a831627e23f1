package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.spi.ClaimRecord;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A run that fails: counted and retried, deferred uncounted on infrastructure trouble, fatal at
 * once, and a crash of the process counted against the message that caused it only.
 */
class FailureStepTest extends ProcessorFixture {

    @Test
    void aNonRetryableFailureGoesToTheDeadLetterAtTheFirstAttempt() {
        Outcome outcome = processor().process(envelope("order-1:fatal"));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(((Outcome.DeadLettered) outcome).reason()).isEqualTo("non-retryable failure");
        assertThat(handled).hasValue(1);
    }

    @Test
    void aUserListedExceptionClassIsFatal() {
        Outcome outcome = builder(handler).fatal(IOException.class).build().process(envelope("order-1:fail"));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
    }

    /** Stands for the process dying inside the handler: nothing after it runs. */
    private static final class Crash extends InternalError {
        private static final long serialVersionUID = 1L;
    }

    @Test
    void aMessageThatCrashesTheProcessEveryTimeReachesTheDeadLetterWithoutRunningAgain() {
        AtomicInteger runs = new AtomicInteger();
        IdempotentProcessor<String> processor = builder(d -> {
            runs.incrementAndGet();
            throw new Crash();
        }).build();

        List<Outcome> outcomes = new ArrayList<>();
        for (int delivery = 0; delivery < 7; delivery++) {
            try {
                outcomes.add(processor.process(envelope("order-1")));
            } catch (Crash crash) {
                clock.advance(LEASE.plusSeconds(1));
            }
        }

        // The first crash is not counted (its claim is counted with its outcome, and a crash has
        // none); every takeover after a crash is counted before the handler runs (decision 0003).
        assertThat(runs).hasValue(6);
        assertThat(outcomes).hasSize(1).allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.DeadLettered.class));
        assertThat(deadLetters.published()).singleElement()
                .satisfies(d -> assertThat(d.reason()).contains("crashed"));
    }

    @Test
    void aCrashInABatchIsCountedForTheCrashingMessageOnly() {
        AtomicInteger poisonRuns = new AtomicInteger();
        List<String> applied = new CopyOnWriteArrayList<>();
        IdempotentProcessor<String> processor = builder(d -> {
            if (d.payload().equals("poison")) {
                poisonRuns.incrementAndGet();
                throw new Crash();
            }
            applied.add(d.payload());
        }).build();
        List<Envelope> batch = List.of(envelope("poison"), envelope("innocent-1"), envelope("innocent-2"));

        for (int delivery = 0; delivery < 8 && applied.isEmpty(); delivery++) {
            Batch<String> claimed = processor.open(batch);
            try {
                for (int i = 0; i < claimed.size(); i++) {
                    claimed.process(i);
                }
                claimed.close();
            } catch (Crash crash) {
                clock.advance(LEASE.plusSeconds(1));
            }
        }

        // The first crash of a batch-claimed message is not counted (its claim was tentative);
        // every later one is, so the poison runs maxAttempts + 1 times, then is dead-lettered.
        assertThat(poisonRuns).hasValue(6);
        assertThat(deadLetters.published()).singleElement().satisfies(d -> assertThat(d.key().value()).isEqualTo("poison"));
        assertThat(applied).containsExactly("innocent-1", "innocent-2");
        assertThat(record("innocent-1").state()).isEqualTo(ClaimRecord.State.DONE);
    }

    @Test
    void aThrowingBusinessCheckDefersWithoutCountingAnAttempt() {
        AtomicInteger checks = new AtomicInteger();
        IdempotentProcessor<String> processor = builder(handler).dedupCheck(d -> {
            if (checks.incrementAndGet() <= 7) {
                throw new java.sql.SQLException("connection reset");
            }
            return false;
        }).build();

        List<Outcome> outcomes = new ArrayList<>();
        for (int delivery = 0; delivery < 8; delivery++) {
            outcomes.add(processor.process(envelope("order-1")));
        }

        assertThat(outcomes.subList(0, 7)).allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.Deferred.class));
        assertThat(outcomes.get(7)).isInstanceOf(Outcome.Applied.class);
        assertThat(((Outcome.Applied) outcomes.get(7)).attempt()).isEqualTo(1);
        assertThat(deadLetters.published()).isEmpty();
    }

    @Test
    void aHandlerMeetingADatabaseFailoverIsDeferredNotCountedNorDeadLettered() {
        AtomicInteger runs = new AtomicInteger();
        IdempotentProcessor<String> processor = builder(d -> {
            if (runs.incrementAndGet() <= 10) {
                throw new java.sql.SQLTransientConnectionException("the database is failing over");
            }
        }).build();

        List<Outcome> outcomes = new ArrayList<>();
        for (int delivery = 0; delivery < 11; delivery++) {
            outcomes.add(processor.process(envelope("order-1")));
        }

        assertThat(outcomes.subList(0, 10)).allSatisfy(o -> {
            assertThat(o).isInstanceOf(Outcome.Deferred.class);
            assertThat(o.disposition().acknowledges()).isFalse();
        });
        assertThat(outcomes.get(10)).isInstanceOf(Outcome.Applied.class);
        assertThat(deadLetters.published()).isEmpty();
        assertThat(compensated).isEmpty();
    }

    @Test
    void aUserListedInfrastructureExceptionIsDeferred() {
        class GatewayDown extends RuntimeException {
            private static final long serialVersionUID = 1L;
        }
        IdempotentProcessor<String> processor = builder(d -> {
            throw new GatewayDown();
        }).infrastructure(GatewayDown.class).build();

        assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Deferred.class);
        assertThat(record("order-1").attempts()).isZero();
    }

    @Test
    void anEffectThatCommittedDespiteTheLastFailureIsADuplicateNotADeadLetter() {
        // Given a handler whose commit succeeds but whose reply is lost on the last attempt
        java.util.Set<String> committed = java.util.concurrent.ConcurrentHashMap.newKeySet();
        AtomicInteger runs = new AtomicInteger();
        IdempotentProcessor<String> processor = builder(d -> {
            if (runs.incrementAndGet() == 5) {
                committed.add(d.key().value());
            }
            throw new IOException("connection closed while committing");
        }).dedupCheck(d -> committed.contains(d.key().value())).build();

        List<Outcome> outcomes = new ArrayList<>();
        for (int delivery = 0; delivery < 5; delivery++) {
            outcomes.add(processor.process(envelope("order-1")));
        }

        assertThat(outcomes.get(4)).isInstanceOf(Outcome.Duplicate.class);
        assertThat(deadLetters.published()).isEmpty();
        assertThat(compensated).isEmpty();
        assertThat(record("order-1").state()).isEqualTo(ClaimRecord.State.DONE);
    }

    @Test
    void aHandlerStackOverflowIsAFailureOfThatMessageNotACrash() {
        IdempotentProcessor<String> processor = builder(d -> {
            throw new StackOverflowError("deep JSON");
        }).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Retrying.class);
        assertThat(record("order-1").failures()).isEqualTo(1);
    }

    @Test
    void aCodecReturningNullIsADefectOfTheMessage() {
        IdempotentProcessor<String> processor = builder(handler).codec(body -> null)
                .keys(KeySource.messageId()).build();

        processor.process(envelope("order-1"));

        assertThat(deadLetters.published()).singleElement()
                .satisfies(letter -> assertThat(letter.reason()).contains("the codec returned null"));
        assertThat(handled).hasValue(0);
    }
}
