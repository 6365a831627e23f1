package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.spi.DeadLetterPublisher;
import io.opentelemetry.api.OpenTelemetry;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One composition rule for every adapter: a copy built, the group filled or refused, the decorator around whichever publisher. */
class ProcessorComposerTest extends ProcessorFixture {

    /** The adapter's own publisher: counts how often it is made and closed. */
    private final class Own implements DeadLetterPublisher, AutoCloseable {
        @Override
        public void publish(DeadLetter letter) {
        }

        @Override
        public void close() {
            closed.incrementAndGet();
        }
    }

    private final AtomicInteger made = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    private final List<DeadLetterPublisher> decorated = new ArrayList<>();

    private ProcessorComposer consumer(String group) {
        return ProcessorComposer.forConsumer("group.id", group).ownPublisher(() -> {
            made.incrementAndGet();
            return new Own();
        }).decorator(publisher -> {
            decorated.add(publisher);
            return publisher;
        });
    }

    @Test
    void aCopyOfABuilderCarriesEverySettingAndChangesApartFromIt() throws Exception {
        IdempotentProcessor.Builder<String> base = builder(handler).maxAttempts(7).maxDeferral(Duration.ofMinutes(3))
                .compensationAttempts(2).interceptor((delivery, proceed) -> proceed.proceed())
                .fatal(IllegalStateException.class).infrastructure(java.io.IOException.class)
                .clock(Clock.fixed(Instant.EPOCH, ZoneOffset.UTC)).ticker(() -> 42L).openTelemetry(OpenTelemetry.noop())
                .traceKeys(TraceKeys.HASHED).meterTag("listener", "reserve").onOutcome(outcome -> { });

        IdempotentProcessor.Builder<String> copy = IdempotentProcessor.Builder.from(base);

        // Every field, the ones added later included: a field not copied fails here
        for (Field field : IdempotentProcessor.Builder.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers())) {
                continue;
            }
            field.setAccessible(true);
            assertThat(field.get(copy)).as(field.getName()).isEqualTo(field.get(base));
        }
        copy.group("billing").fatal(IllegalArgumentException.class).infrastructure(java.sql.SQLException.class)
                .meterTag("other", "x");
        assertThat(base.group).isEqualTo("inventory");
        assertThat(base.fatal).containsExactly(IllegalStateException.class);
        assertThat(base.infrastructure).containsExactly(java.io.IOException.class);
        assertThat(base.meterTags).containsOnlyKeys("listener");
    }

    @Test
    void theUsersBuilderIsNeverEditedSoItBuildsForAnotherConsumerToo() {
        IdempotentProcessor.Builder<String> user = builder(handler).group(null).deadLetters(null);

        ProcessorComposer.Composed<String> first = consumer("inventory").compose(user);
        ProcessorComposer.Composed<String> second = consumer("billing").compose(user);
        first.close();
        second.close();

        assertThat(user.group).isNull();
        assertThat(user.deadLetters).isNull();
        assertThat(made).hasValue(2);
        assertThat(closed).hasValue(2);
        assertThat(decorated).hasSize(2).allSatisfy(publisher -> assertThat(publisher).isInstanceOf(Own.class));
    }

    @Test
    void theDecoratorWrapsTheUsersPublisherWhenItHasOneAndNoOwnIsMade() {
        ProcessorComposer.Composed<String> composed = consumer("inventory").compose(builder(handler));
        composed.close();

        assertThat(decorated).containsExactly(deadLetters);
        assertThat(composed.ownPublisher()).isFalse();
        assertThat(made).hasValue(0);
    }

    @Test
    void aGroupOtherThanTheConsumersIsRefusedNamingBothAndNothingIsLeftOpen() {
        assertThatThrownBy(() -> consumer("inventory").compose(builder(handler).group("billing").deadLetters(null)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the processor's group 'billing' differs from the consumer's group.id 'inventory'");
        assertThat(made).hasValue(0);
    }

    @Test
    void theOwnPublisherIsClosedWhenTheBuildFails() {
        assertThatThrownBy(() -> consumer("inventory").compose(builder(handler).deadLetters(null).maxAttempts(0)))
                .hasMessage("maxAttempts must be >= 1 but was 0");
        assertThat(made).hasValue(1);
        assertThat(closed).hasValue(1);
    }

    @Test
    void theConsumersLimitsAreCheckedBeforeAnythingIsMade() {
        ProcessorComposer strict = consumer("inventory").limits(limits -> {
            if (limits.maxAttempts() > 3) {
                throw new IllegalArgumentException("maxAttempts " + limits.maxAttempts() + " is more than the broker allows");
            }
        });

        assertThatThrownBy(() -> strict.compose(builder(handler).deadLetters(null)))
                .hasMessage("maxAttempts 5 is more than the broker allows");
        assertThat(made).hasValue(0);
    }

    @Test
    void aDecoratorReturningNullIsRefused() {
        ProcessorComposer nulling = ProcessorComposer.forConsumer("group.id", "inventory").decorator(publisher -> null);

        assertThatThrownBy(() -> nulling.compose(builder(handler)))
                .hasMessage("the deadLetters decorator must return a publisher but returned null");
    }

    @Test
    void aLedgerAWrappedListenerCannotWriteIsRefusedAndOneReadingItsEffectIsNot() {
        EffectLedger<Object> ledgerOfItsOwn = ledgerItsHandlerCannotWrite();
        EffectLedger<Object> readingTheEffect = delivery -> false;

        assertThatThrownBy(() -> consumer("inventory").handlerOutsideTransaction()
                .compose(builder(handler).dedupCheck(ledgerOfItsOwn)))
                .hasMessageStartingWith("dedupCheck must not be a ledger whose rows the handler cannot write");
        consumer("inventory").handlerOutsideTransaction().compose(builder(handler).dedupCheck(readingTheEffect)).close();
    }
}
