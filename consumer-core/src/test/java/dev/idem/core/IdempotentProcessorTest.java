package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * A message's trip through the processor when nothing fails: claimed, checked, run once; a copy is
 * a duplicate or busy; the interceptor, the logging context, meters, listeners and settings.
 */
class IdempotentProcessorTest extends ProcessorFixture {

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
    void aMessageWithoutAKeyFallsBackToTheMessageIdWhereConfigured() {
        IdempotentProcessor<String> processor = builder(handler)
                .keys(KeySource.<String>header("order-id").orElse(KeySource.messageId())).build();

        Outcome outcome = processor.process(envelope("order-1"));

        assertThat(outcome).isInstanceOf(Outcome.Applied.class);
        assertThat(outcome.key().value()).isEqualTo("orders-0@7");
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
        IdempotentProcessor<String> processor = builder(d -> seen.add("handler " + MDC.get("idem.key") + " "
                + MDC.get("idem.topic") + " attempt " + MDC.get("idem.attempt")))
                .interceptor((delivery, proceed) -> {
                    seen.add("before attempt " + delivery.attempt());
                    proceed.proceed();
                    seen.add("after");
                }).build();

        processor.process(envelope("order-1"));

        assertThat(seen).containsExactly("before attempt 1", "handler order-1 orders attempt 1", "after");
        assertThat(MDC.get("idem.key")).isNull();
        assertThat(MDC.get("idem.topic")).isNull();
        assertThat(MDC.get("idem.attempt")).isNull();
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
        EffectLedger<Object> needsItsHandler = ledgerItsHandlerCannotWrite();

        assertThatThrownBy(() -> builder(handler).dedupCheck(needsItsHandler).build())
                .hasMessageContaining("ledger.processor");
    }
}
