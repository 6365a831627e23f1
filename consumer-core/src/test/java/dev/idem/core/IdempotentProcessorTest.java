package dev.idem.core;

import dev.idem.core.spi.CompensationOutcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class IdempotentProcessorTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration BACKOFF = Duration.ofMillis(250);

    private final MutableClock clock = new MutableClock();
    private final InMemoryClaimStore store = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
    private final RecordingPublisher deadLetters = new RecordingPublisher();
    private final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    private final AtomicInteger handled = new AtomicInteger();

    /** Payloads are "key" or "key:fail" (always throws) or "key:fatal". */
    private final DeliveryHandler<String> handler = delivery -> {
        handled.incrementAndGet();
        if (delivery.payload().endsWith(":fail")) {
            throw new IOException("stock service unavailable");
        }
        if (delivery.payload().endsWith(":fatal")) {
            throw new NonRetryableException("unknown product");
        }
    };

    private IdempotentProcessor.Builder<String> builder(DeliveryHandler<String> handler) {
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

    private IdempotentProcessor<String> processor() {
        return builder(handler).build();
    }

    private static Envelope envelope(String body) {
        return envelope(body, 0);
    }

    private static Envelope envelope(String body, int brokerAttempt) {
        return new Envelope("orders", 0, "7", "orders-0@7", brokerAttempt, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private ClaimRecord record(String key) {
        return store.inspect(new IdempotencyKey("inventory", "orders", key)).orElseThrow();
    }

    @Test
    void aMeterTagIsOnEveryMeterBesidesTheGroup() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IdempotentProcessor<String> processor = builder(handler).meterRegistry(registry)
                .meterTag("listener", "reserve-stock").build();

        processor.process(envelope("order-1"));

        assertThat(registry.getMeters()).isNotEmpty().allSatisfy(meter -> {
            assertThat(meter.getId().getTag("group")).isEqualTo("inventory");
            assertThat(meter.getId().getTag("listener")).isEqualTo("reserve-stock");
        });
        assertThat(registry.get("idem.outcomes").tag("listener", "reserve-stock").tag("outcome", "applied")
                .counter().count()).isEqualTo(1.0);
        assertThatThrownBy(() -> builder(handler).meterTag("group", "other"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'group'");
    }

    @Test
    void aMessageIsAppliedOnceAndItsRedeliveryIsADuplicate() {
        IdempotentProcessor<String> processor = processor();

        Outcome first = processor.process(envelope("order-1"));
        Outcome second = processor.process(envelope("order-1"));

        assertThat(first).isInstanceOf(Outcome.Applied.class);
        assertThat(second).isInstanceOf(Outcome.Duplicate.class);
        assertThat(first.disposition().acknowledges()).isTrue();
        assertThat(second.disposition().acknowledges()).isTrue();
        assertThat(handled).hasValue(1);
        assertThat(record("order-1").state()).isEqualTo(ClaimRecord.State.DONE);
    }

    @Test
    void anEffectFoundByTheBusinessCheckIsNotAppliedAgain() {
        IdempotentProcessor<String> processor = builder(handler).dedupCheck(delivery -> true).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Duplicate.class);
        assertThat(handled).hasValue(0);
        assertThat(record("order-1").state()).isEqualTo(ClaimRecord.State.DONE);
    }

    @Test
    void anEffectRefusedByTheSystemOfRecordIsADuplicateNotAFailure() {
        IdempotentProcessor<String> processor = builder(delivery -> {
            throw new DuplicateEffectException("row exists", null);
        }).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Duplicate.class);
        assertThat(record("order-1").failures()).isZero();
    }

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
    void aMessageWithoutAKeyFallsBackToTheMessageIdWhereConfigured() {
        IdempotentProcessor<String> processor = builder(handler)
                .keys(KeySource.<String>header("order-id").orElse(KeySource.messageId())).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Applied.class);
        assertThat(outcome.key().value()).isEqualTo("orders-0@7");
    }

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

    @Test
    void aKeyHeldByAnotherOwnerIsBusyAndRedeliveredNeverDropped() {
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-1");
        store.claim(List.of(new ClaimRequest(key, 0)), "another-consumer", LEASE);

        Outcome outcome = processor().process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Busy.class);
        assertThat(outcome.disposition().acknowledges()).isFalse();
        assertThat(handled).hasValue(0);
    }

    @Test
    void anUnreachableClaimStoreFailsClosed() {
        ClaimStore down = (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(),
                new Class<?>[] {ClaimStore.class}, (proxy, method, args) -> {
                    if (method.getName().endsWith("Window")) {
                        return Duration.ofDays(1);
                    }
                    throw new ClaimStoreException("connection refused", null);
                });
        IdempotentProcessor<String> processor = builder(handler).claims(down).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Deferred.class);
        assertThat(outcome.disposition().acknowledges()).isFalse();
        assertThat(handled).hasValue(0);
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
    void theSameKeyTwiceInOneBatchRunsOnce() {
        IdempotentProcessor<String> processor = processor();
        List<Outcome> outcomes = new ArrayList<>();

        try (Batch<String> batch = processor.open(List.of(envelope("order-1"), envelope("order-1")))) {
            outcomes.add(batch.process(0));
            outcomes.add(batch.process(1));
        }

        assertThat(outcomes.get(0)).isInstanceOf(Outcome.Applied.class);
        assertThat(outcomes.get(1)).isInstanceOf(Outcome.Duplicate.class);
        assertThat(handled).hasValue(1);
    }

    @Test
    void theBrokersCountIsTheFloorWhenIdemsRecordWasLost() {
        Outcome outcome = processor().process(envelope("order-1:fail", 5));

        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(handled).hasValue(1);
    }

    @Test
    void theHandlerRunsWithTheKeyInTheLoggingContextAndThroughTheInterceptor() {
        List<String> seen = new CopyOnWriteArrayList<>();
        IdempotentProcessor<String> processor = builder(d -> seen.add("handler " + MDC.get("idem.key")))
                .interceptor((delivery, proceed) -> {
                    seen.add("before attempt " + delivery.attempt());
                    proceed.proceed();
                    seen.add("after");
                }).build();

        processor.process(envelope("order-1"));

        assertThat(seen).containsExactly("before attempt 1", "handler order-1", "after");
        assertThat(MDC.get("idem.key")).isNull();
    }

    @Test
    void anInterceptorCallingProceedTwiceRunsTheHandlerOnceAndFailsTheAttempt() {
        IdempotentProcessor<String> processor = builder(handler).interceptor((delivery, proceed) -> {
            proceed.proceed();
            proceed.proceed();
        }).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(handled).hasValue(1);
        assertThat(outcome).isInstanceOf(Outcome.Retrying.class);
        assertThat(((Outcome.Retrying) outcome).cause()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("proceed");
    }

    @Test
    void everyOutcomeIsCountedPerTopicAndTheHandlerIsTimed() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IdempotentProcessor<String> processor = builder(handler).meterRegistry(registry).build();

        processor.process(envelope("order-1"));
        processor.process(envelope("order-1"));
        processor.process(envelope("order-2:fail"));

        assertThat(registry.get("idem.outcomes").tag("outcome", "applied").tag("topic", "orders").counter().count())
                .isEqualTo(1);
        assertThat(registry.get("idem.outcomes").tag("outcome", "duplicate").counter().count()).isEqualTo(1);
        assertThat(registry.get("idem.outcomes").tag("outcome", "retrying").counter().count()).isEqualTo(1);
        assertThat(registry.get("idem.handler").timer().count()).isEqualTo(2);
        assertThat(registry.get("idem.claim").timer().count()).isEqualTo(3);
    }

    @Test
    void aWrongSettingFailsAtBuildNamingTheSetting() {
        assertThatThrownBy(() -> builder(handler).maxAttempts(0).build())
                .hasMessage("maxAttempts must be >= 1 but was 0");
        assertThatThrownBy(() -> builder(handler).claims(null).build())
                .hasMessage("claims is required but was not set");
        assertThatThrownBy(() -> builder(handler).group(" ").build())
                .hasMessageContaining("group must not be blank");
        assertThatThrownBy(() -> builder(handler).lease(Duration.ofMillis(5)).build())
                .hasMessageContaining("lease must be >= 100ms");
    }

    @Test
    void compensationNoneAndBackoffFactoriesBehave() throws Exception {
        Compensation.none().compensate(null);
        Backoff backoff = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(10), 0);

        assertThat(backoff.delay(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.delay(3)).isEqualTo(Duration.ofSeconds(4));
        assertThat(backoff.delay(30)).isEqualTo(Duration.ofSeconds(10));
        assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, Duration.ofSeconds(1), 0))
                .hasMessageContaining("initial");
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
    void windowsThatCannotHoldTheRetriesAreRefusedAtBuildNamingTheSettings() {
        InMemoryClaimStore shortCounts = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofSeconds(10));
        InMemoryClaimStore doneShorterThanCounts = new InMemoryClaimStore(clock, Duration.ofHours(1), Duration.ofDays(1));

        assertThatThrownBy(() -> builder(handler).claims(shortCounts).backoff(Backoff.fixed(Duration.ofSeconds(30)))
                .build()).hasMessageContaining("attemptsWindow").hasMessageContaining("backoff");
        assertThatThrownBy(() -> builder(handler).claims(doneShorterThanCounts).build())
                .hasMessageContaining("doneWindow").hasMessageContaining("attemptsWindow");
        EffectLedger<Object> forgetful = new EffectLedger<>() {
            @Override
            public boolean alreadyApplied(Delivery<?> delivery) {
                return false;
            }

            @Override
            public java.util.Optional<Duration> retention() {
                return java.util.Optional.of(Duration.ofDays(1));
            }
        };
        assertThatThrownBy(() -> builder(handler).dedupCheck(forgetful).build())
                .hasMessageContaining("retention").hasMessageContaining("doneWindow");
        assertThatThrownBy(() -> builder(handler).backoff(attempt -> Duration.ofSeconds(-1)).build())
                .hasMessageContaining("backoff must give a delay >= 0");
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

    @Test
    void theOutcomeListenerSeesEveryOutcome() {
        List<Outcome> seen = new CopyOnWriteArrayList<>();
        IdempotentProcessor<String> processor = builder(handler).onOutcome(seen::add).build();

        processor.process(envelope("order-1"));
        processor.process(envelope("order-1"));

        assertThat(seen).hasSize(2);
        assertThat(seen.get(0)).isInstanceOf(Outcome.Applied.class);
        assertThat(seen.get(1)).isInstanceOf(Outcome.Duplicate.class);
    }

    @Test
    void aLedgerCheckWithAHandlerThatNeverWritesTheLedgerIsRefused() {
        EffectLedger<Object> needsItsHandler = new EffectLedger<>() {
            @Override
            public boolean alreadyApplied(Delivery<?> delivery) {
                return false;
            }

            @Override
            public boolean recordedBy(DeliveryHandler<?> handler) {
                return false;
            }
        };

        assertThatThrownBy(() -> builder(handler).dedupCheck(needsItsHandler).build())
                .hasMessageContaining("ledger.processor");
    }
}
