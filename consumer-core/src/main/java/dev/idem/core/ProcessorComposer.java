package dev.idem.core;

import dev.idem.core.spi.DeadLetterPublisher;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * Makes the processor a consumer runs from the builder its user configured, the one way every
 * adapter and integration does (decision 0052): an SPI for adapter authors; applications use an
 * adapter. It builds a copy ({@link IdempotentProcessor.Builder#from}), so the user's builder is
 * never edited and can build again. The processor's group is the consumer's: taken from it when
 * unset, refused when different. Its dead-letter publisher is the user's, or else the adapter's own,
 * made only then; the user's decorator wraps whichever it is.
 *
 * <pre>{@code
 * ProcessorComposer.Composed<T> composed = ProcessorComposer.forConsumer("group.id", groupId)
 *     .ownPublisher(() -> KafkaDeadLetterPublisher.builder(config).build())
 *     .decorator(userDecorator)
 *     .compose(userBuilder);
 * }</pre>
 *
 * Not thread-safe; one per consumer being built.
 */
public final class ProcessorComposer {

    /**
     * What the consumer requires of the processor's settings, checked before anything is made.
     *
     * @param maxAttempts handler runs before the dead letter
     * @param lease       the claim lease
     */
    public record Limits(int maxAttempts, Duration lease) {
    }

    /**
     * A processor built for a consumer, and the adapter's own publisher when it made one. Closing
     * closes the processor, then that publisher.
     *
     * @param <T> payload type
     */
    public static final class Composed<T> implements AutoCloseable {

        private final IdempotentProcessor<T> processor;
        private final @Nullable AutoCloseable ownPublisher;

        private Composed(IdempotentProcessor<T> processor, @Nullable AutoCloseable ownPublisher) {
            this.processor = processor;
            this.ownPublisher = ownPublisher;
        }

        public IdempotentProcessor<T> processor() {
            return processor;
        }

        /** Whether the adapter made a dead-letter publisher for it (the user set none). */
        public boolean ownPublisher() {
            return ownPublisher != null;
        }

        @Override
        public void close() {
            RuntimeException failure = null;
            try {
                processor.close();
            } catch (RuntimeException e) {
                failure = e;
            }
            failure = closeQuietly(ownPublisher, failure);
            if (failure != null) {
                throw failure;
            }
        }
    }

    private final String groupSetting;
    private final String group;
    private Supplier<? extends AutoCloseable> ownPublisher = () -> {
        throw new IllegalStateException("the adapter set no ownPublisher");
    };
    private UnaryOperator<DeadLetterPublisher> decorator = UnaryOperator.identity();
    private boolean handlerOutsideTransaction;
    private Consumer<Limits> limits = given -> { };

    private ProcessorComposer(String groupSetting, String group) {
        this.groupSetting = Objects.requireNonNull(groupSetting, "groupSetting");
        this.group = Objects.requireNonNull(group, "group");
    }

    /**
     * For a consumer of {@code group}, set where {@code groupSetting} says ({@code group.id}, {@code group}:
     * messages name it).
     */
    public static ProcessorComposer forConsumer(String groupSetting, String group) {
        return new ProcessorComposer(groupSetting, group);
    }

    /** Makes the adapter's own dead-letter publisher, called only when the processor has none. */
    public <P extends DeadLetterPublisher & AutoCloseable> ProcessorComposer ownPublisher(Supplier<P> ownPublisher) {
        this.ownPublisher = Objects.requireNonNull(ownPublisher, "ownPublisher");
        return this;
    }

    /** The user's wrapper around the publisher in use. Default: none. */
    public ProcessorComposer decorator(UnaryOperator<DeadLetterPublisher> decorator) {
        this.decorator = Objects.requireNonNull(decorator, "decorator");
        return this;
    }

    /**
     * The handler runs outside any transaction of the business check (a wrapped listener): a ledger
     * whose rows the handler cannot write, such as the JDBC ledger, is refused naming what to use.
     */
    public ProcessorComposer handlerOutsideTransaction() {
        this.handlerOutsideTransaction = true;
        return this;
    }

    /** Checks the consumer makes of the processor's settings (throw {@link IllegalArgumentException}). */
    public ProcessorComposer limits(Consumer<Limits> limits) {
        this.limits = Objects.requireNonNull(limits, "limits");
        return this;
    }

    /**
     * Builds the processor from a copy of {@code user}; {@code user} is left as it is.
     *
     * @throws IllegalArgumentException naming the setting: a group different from the consumer's, a
     *                                  ledger the handler cannot write, a limit of the consumer, a
     *                                  decorator returning null, or any setting
     *                                  {@link IdempotentProcessor.Builder#build()} refuses
     */
    public <T> Composed<T> compose(IdempotentProcessor.Builder<T> user) {
        IdempotentProcessor.Builder<T> copy = IdempotentProcessor.Builder.from(user);
        if (copy.group == null) {
            copy.group = group;
        } else if (!copy.group.equals(group)) {
            throw new IllegalArgumentException("the processor's group '" + copy.group + "' differs from the consumer's "
                    + groupSetting + " '" + group + "': Idem's keys are namespaced by the consumer group, so the two "
                    + "must be the same (leave the processor's group unset and it is taken from the consumer)");
        }
        if (handlerOutsideTransaction && copy.dedupCheck instanceof EffectLedger<?> ledger
                && !ledger.recordedBy(copy.handler)) {
            throw new IllegalArgumentException("dedupCheck must not be a ledger whose rows the handler cannot write "
                    + "(the JDBC ledger) for a wrapped listener: the listener does not run in the ledger's transaction, "
                    + "so no ledger row is ever written. Use the adapter's consumer with a processor built by "
                    + "ledger.processor(...), or a DedupCheck that reads the effect your listener writes");
        }
        if (copy.maxAttempts >= 1 && copy.lease != null) {
            limits.accept(new Limits(copy.maxAttempts, copy.lease));
        }
        AutoCloseable own = null;
        try {
            if (copy.deadLetters == null) {
                own = Objects.requireNonNull(ownPublisher.get(), "ownPublisher returned null");
                copy.deadLetters = (DeadLetterPublisher) own;
            }
            DeadLetterPublisher publisher = decorator.apply(copy.deadLetters);
            if (publisher == null) {
                throw new IllegalArgumentException("the deadLetters decorator must return a publisher but returned null");
            }
            copy.deadLetters = publisher;
            return new Composed<>(copy.build(), own);
        } catch (RuntimeException e) {
            throw Objects.requireNonNull(closeQuietly(own, e));
        } catch (Error e) {
            closeQuietly(own, null);
            throw e;
        }
    }

    /** Closes {@code closeable}, adding its failure to {@code failure}; returns the failure to throw, if any. */
    private static @Nullable RuntimeException closeQuietly(@Nullable AutoCloseable closeable,
                                                           @Nullable RuntimeException failure) {
        if (closeable == null) {
            return failure;
        }
        try {
            closeable.close();
            return failure;
        } catch (Exception e) {
            RuntimeException thrown = e instanceof RuntimeException runtime ? runtime
                    : new IllegalStateException("closing the dead-letter publisher failed", e);
            if (failure == null) {
                return thrown;
            }
            failure.addSuppressed(thrown);
            return failure;
        }
    }
}
