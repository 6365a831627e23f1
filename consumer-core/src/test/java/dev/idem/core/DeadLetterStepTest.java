package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.CompensationOutcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The end of a message that cannot succeed: one dead letter with its reason, one compensation, and
 * a dead letter the broker did not take leaving the source unacknowledged.
 */
class DeadLetterStepTest extends ProcessorFixture {

    @Test
    void aHandlerFailingFiveTimesIsDeadLetteredOnceAndCompensatedOnce() {
        IdempotentProcessor<String> processor = processor();
        List<Outcome> outcomes = new ArrayList<>();

        for (int delivery = 0; delivery < 8; delivery++) {
            outcomes.add(processor.process(envelope("order-1:fail")));
        }

        assertThat(outcomes.subList(0, 4)).allSatisfy(o -> {
            assertThat(o).isInstanceOf(Outcome.Retrying.class);
            assertThat(o.disposition()).isEqualTo(new Disposition(Disposition.Action.RETRY, BACKOFF));
        });
        assertThat(((Outcome.Retrying) outcomes.get(3)).attempt()).isEqualTo(4);
        assertThat(outcomes.get(4)).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(((Outcome.DeadLettered) outcomes.get(4)).earlier()).isFalse();
        assertThat(outcomes.subList(5, 8)).allSatisfy(o -> assertThat(((Outcome.DeadLettered) o).earlier()).isTrue());
        assertThat(handled).hasValue(5);
        assertThat(deadLetters.published()).hasSize(1);
        assertThat(compensated).hasSize(1);
        DeadLetter deadLetter = deadLetters.published().get(0);
        assertThat(deadLetter.headers()).containsEntry("idem-attempts", "5")
                .containsEntry("idem-exception-class", IOException.class.getName())
                .containsEntry("idem-exception-message", "stock service unavailable")
                .containsEntry("idem-idempotency-key", "order-1")
                .containsEntry("idem-original-topic", "orders")
                .containsEntry("idem-consumer-group", "inventory")
                .containsKeys("idem-exception-stacktrace", "idem-first-failure-at", "idem-last-failure-at");
        ClaimRecord record = record("order-1");
        assertThat(record.state()).isEqualTo(ClaimRecord.State.DEAD);
        assertThat(record.attempts()).isEqualTo(5);
        assertThat(record.failures()).isEqualTo(5);
        assertThat(record.compensation()).contains(CompensationOutcome.OK);
    }

    @Test
    void aThrowingCompensationIsRetriedABoundedNumberOfTimesRecordedAndNeverRerun() {
        AtomicInteger calls = new AtomicInteger();
        IdempotentProcessor<String> processor = builder(handler).compensationAttempts(3)
                .compensation(deadLetter -> {
                    calls.incrementAndGet();
                    throw new IllegalStateException("refund service down");
                }).build();

        Outcome outcome = processor.process(envelope("order-1:fatal"));
        processor.process(envelope("order-1:fatal"));
        processor.process(envelope("order-1:fatal"));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(calls).hasValue(3);
        assertThat(record("order-1").compensation()).hasValueSatisfying(
                c -> assertThat(c.text()).startsWith("failed: ").contains("refund service down"));
    }

    /**
     * The ledger's database down while the compensation runs (a transactional compensation, or a
     * hook calling a host that refuses connections) is not the compensation's failure: recorded as
     * failed, it would never run again, and the undo would be lost. It stays pending, not
     * acknowledged, and the delivery after its compensation lease takes it over and runs it.
     */
    @Test
    void aCompensationMeetingInfrastructureTroubleIsNotRecordedAsFailedAndRunsAgain() {
        AtomicInteger calls = new AtomicInteger();
        IdempotentProcessor<String> processor = builder(handler).compensationAttempts(3)
                .compensation(deadLetter -> {
                    if (calls.incrementAndGet() <= 2) {
                        throw new CheckUnavailableException("the ledger's database cannot be reached", null);
                    }
                    compensated.add(deadLetter);
                }).build();

        Outcome first = processor.process(envelope("order-1:fatal"));
        assertThat(record("order-1").compensation()).contains(CompensationOutcome.PENDING);
        clock.advance(LEASE.plusSeconds(1));   // its compensation lease, no longer renewed, ends
        Outcome second = processor.process(envelope("order-1:fatal"));
        clock.advance(LEASE.plusSeconds(1));
        Outcome third = processor.process(envelope("order-1:fatal"));

        assertThat(first).isInstanceOf(Outcome.Deferred.class);
        assertThat(second).isInstanceOf(Outcome.Deferred.class);
        assertThat(third).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(calls).hasValue(3);
        assertThat(compensated).hasSize(1);
        assertThat(compensated.get(0).compensationId()).as("the same dead-lettering")
                .isEqualTo(deadLetters.published().get(0).compensationId());
        assertThat(deadLetters.published()).as("one dead letter").hasSize(1);
        assertThat(record("order-1").compensation()).contains(CompensationOutcome.OK);
    }

    @Test
    void aDeadLetterTheBrokerDidNotAcknowledgeLeavesTheSourceUnacknowledged() {
        IdempotentProcessor<String> processor = processor();
        deadLetters.failNext(2);
        List<Outcome> outcomes = new ArrayList<>();

        for (int delivery = 0; delivery < 8; delivery++) {
            Outcome outcome = processor.process(envelope("order-1:fail"));
            outcomes.add(outcome);
            if (outcome instanceof Outcome.Deferred) {
                clock.advance(BACKOFF);
            }
        }

        assertThat(outcomes.get(4)).isInstanceOf(Outcome.Deferred.class);
        assertThat(outcomes.get(5)).isInstanceOf(Outcome.Deferred.class);
        assertThat(outcomes.get(4).disposition().acknowledges()).isFalse();
        assertThat(outcomes.get(6)).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(handled).as("the handler does not run again after its last attempt").hasValue(5);
        assertThat(deadLetters.published()).singleElement().satisfies(letter -> {
            // The letter that lands carries the original reason and exception, not "the process crashed".
            assertThat(letter.reason()).isEqualTo("attempts exhausted");
            assertThat(letter.exceptionClass()).isEqualTo(IOException.class.getName());
            assertThat(letter.exceptionMessage()).isEqualTo("stock service unavailable");
            assertThat(letter.attempts()).isEqualTo(5);
        });
        assertThat(compensated).hasSize(1);
    }

    @Test
    void aFatalFailureWhoseDeadLetterPublishFailsNeverRunsAgain() {
        IdempotentProcessor<String> processor = processor();
        deadLetters.failNext(1);

        Outcome first = processor.process(envelope("order-1:fatal"));
        clock.advance(BACKOFF);
        Outcome second = processor.process(envelope("order-1:fatal"));

        assertThat(first).isInstanceOf(Outcome.Deferred.class);
        assertThat(second).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(handled).hasValue(1);
        assertThat(deadLetters.published()).singleElement().satisfies(letter -> {
            assertThat(letter.reason()).isEqualTo("non-retryable failure");
            assertThat(letter.exceptionClass()).isEqualTo(NonRetryableException.class.getName());
            assertThat(letter.attempts()).isEqualTo(1);
        });
        assertThat(compensated).hasSize(1);
    }

    @Test
    void copiesArrivingWhileAFailedDeadLetterBacksOffAreBusyNotPublished() {
        IdempotentProcessor<String> processor = processor();
        deadLetters.failNext(1);
        processor.process(envelope("order-1:fatal"));

        List<Outcome> copies = new ArrayList<>();
        for (int copy = 0; copy < 20; copy++) {
            copies.add(processor.process(envelope("order-1:fatal")));
        }

        assertThat(copies).allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.Busy.class));
        assertThat(deadLetters.attempts()).isEqualTo(1);
        assertThat(handled).hasValue(1);
    }

    @Test
    void anUndecodablePayloadGoesToTheDeadLetterAtOnceWithTheReason() {
        record Order(String id, int quantity) {
        }
        AtomicInteger calls = new AtomicInteger();
        IdempotentProcessor<Order> processor = IdempotentProcessor.<Order>builder(d -> calls.incrementAndGet())
                .group("inventory").claims(store).dedupCheck(DedupCheck.none()).deadLetters(deadLetters)
                .codec(PayloadCodec.json(Order.class)).keys(KeySource.payload(Order::id))
                .meterRegistry(new SimpleMeterRegistry()).build();

        Outcome outcome = processor.process(envelope("{not json"));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(outcome.disposition().acknowledges()).isTrue();
        assertThat(calls).hasValue(0);
        assertThat(deadLetters.published()).singleElement().satisfies(d -> {
            assertThat(d.reason()).startsWith("undecodable payload");
            assertThat(d.key().value()).as("no business key: the message id").isEqualTo("orders-0@7");
            assertThat(d.headers().get("idem-exception-class")).contains("jackson");
        });
    }

    @Test
    void aMessageWithoutAKeyGoesToTheDeadLetterWithTheReason() {
        IdempotentProcessor<String> processor = builder(handler).keys(KeySource.header("order-id")).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(handled).hasValue(0);
        assertThat(deadLetters.published()).singleElement()
                .satisfies(d -> assertThat(d.reason()).isEqualTo("no idempotency key"));
    }

    @Test
    void aFreshRecordWhoseBrokerCountIsPastTheLimitRunsOnceBeforeItIsDeadLettered() {
        // Given a message the broker redelivered 7 times while Idem deferred it (no record in Redis)
        Outcome outcome = processor().process(envelope("order-1", 8));

        // Then it gets one real run, not a dead letter on the broker's count alone
        assertThat(outcome).isInstanceOf(Outcome.Applied.class);
        assertThat(handled).hasValue(1);
        assertThat(deadLetters.published()).isEmpty();
    }

    @Test
    void aKeyFunctionThatThrowsKeepsItsExceptionOnTheDeadLetter() {
        IdempotentProcessor<String> processor = builder(handler).keys((envelope, payload) -> {
            throw new IllegalStateException("order has no id");
        }).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(deadLetters.published()).singleElement().satisfies(letter -> {
            assertThat(letter.reason()).startsWith("idempotency key function failed");
            assertThat(letter.exceptionClass()).isEqualTo(IllegalStateException.class.getName());
            assertThat(letter.exceptionMessage()).isEqualTo("order has no id");
        });
        assertThat(handled).hasValue(0);
    }

    @Test
    void aKeyOverTheLengthLimitHasItsOwnReason() {
        IdempotentProcessor<String> processor = builder(handler).keys(KeySource.payload(p -> "x".repeat(600))).build();

        processor.process(envelope("order-1"));

        assertThat(deadLetters.published()).singleElement()
                .satisfies(letter -> assertThat(letter.reason()).contains("longer than 512"));
    }
}
