package dev.idem.kafka;

import dev.idem.core.ProcessorComposer;
import dev.idem.core.ConsumerState;
import dev.idem.core.IdemConsumer;
import dev.idem.kafka.internal.ConsumerLifecycle;
import dev.idem.kafka.internal.KafkaProcessors;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * What both Idem Kafka consumers say of themselves, said once: state, the failure heard last, the
 * oldest deferral and when everything is let go. {@link IdemKafkaConsumer} and the share consumer
 * extend it; not meant to be extended outside Idem. Thread-safe.
 *
 * @param <T> payload type
 */
public abstract class AbstractIdemKafkaConsumer<T> implements IdemConsumer {

    /** The consumer's life: start, state, ordered close, release. */
    protected final ConsumerLifecycle life;
    /** The processor the consumer built, with the dead-letter publisher it made. */
    protected final ProcessorComposer.Composed<T> composed;

    /**
     * @param name      the consumer's class name, for messages
     * @param log       the consumer's logger
     * @param onFailure the user's failure listener
     * @param composed  its processor and the dead-letter publisher made for it
     */
    protected AbstractIdemKafkaConsumer(String name, Logger log, Consumer<Throwable> onFailure,
                                        ProcessorComposer.Composed<T> composed) {
        this.composed = composed;
        this.life = new ConsumerLifecycle(name, log, onFailure, this::releaseResources);
    }

    /** Shuts the consumer's executors and closes what it made (the processor last); run once. */
    protected abstract void releaseResources();

    @Override
    public final ConsumerState state() {
        return life.state();
    }

    @Override
    public final Optional<Duration> oldestDeferral() {
        return composed.processor().oldestDeferral();
    }

    /**
     * The failure that stopped the consumer ({@link ConsumerState#FAILED}), or else the latest one it
     * survived (a failed commit or claim round trip, a record's escaped error, no group membership
     * yet), or null.
     */
    public final @Nullable Throwable failure() {
        return life.failure();
    }

    /**
     * Completes once the consumer has let go of everything after {@link #close()}: no record runs any
     * more, lease renewal has stopped and the dead-letter producer is closed. {@code close()} returns
     * at its bound even when a handler still runs; close what those records still use (the Redis
     * client, a publisher of your own) when this completes.
     */
    @Override
    public final CompletionStage<Void> released() {
        return life.released();
    }

    /** Whether the consumer is started and neither closed nor failed. */
    public final boolean isRunning() {
        return life.isRunning();
    }
}
