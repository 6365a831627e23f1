package dev.idem.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * What every Idem consumer is to the application around it (a framework's lifecycle, a health
 * check, a main method): started once, in a {@link ConsumerState}, perhaps holding a message that
 * keeps coming back unsettled, closed in order. {@code IdemKafkaConsumer},
 * {@code IdemKafkaShareConsumer} and {@code IdemRocketMqConsumer} are Idem consumers.
 */
public interface IdemConsumer extends AutoCloseable {

    /** How long a consumer's close waits for its running records unless its builder says otherwise: 30 s. */
    java.time.Duration DEFAULT_CLOSE_TIMEOUT = java.time.Duration.ofSeconds(30);

    /**
     * Starts consuming on Idem's (or the client's) own threads.
     *
     * @throws IllegalStateException if it cannot start, or was started or closed before
     */
    void start();

    /** Where the consumer is in its life: {@link ConsumerState#RUNNING} when healthy. */
    ConsumerState state();

    /**
     * How long the message deferred longest in a row has been coming back unsettled; empty when none
     * is ({@link IdempotentProcessor#oldestDeferral()}).
     */
    Optional<Duration> oldestDeferral();

    /**
     * Completes once the consumer has let go of everything after {@link #close()} (no message runs any
     * more, lease renewal and its dead-letter producer stopped). A close that returns at its bound while
     * a handler still runs (the Kafka consumers') completes this later: close what those records still
     * use (the Redis client, a publisher of your own) then. Default: at once, for a consumer whose close
     * returns only then.
     */
    default CompletionStage<Void> released() {
        return CompletableFuture.completedStage(null);
    }

    /**
     * The failure that stopped the consumer ({@link ConsumerState#FAILED}), or else the latest one it
     * survived (a failed commit or claim round trip, a record's escaped error, no group membership
     * yet), or null. The Kafka consumers report them; RocketMQ's client logs its own.
     */
    default @Nullable Throwable failure() {
        return null;
    }

    /** Whether the consumer is started and neither closed nor failed. */
    default boolean isRunning() {
        return state().isLive();
    }

    /** Stops taking work, lets what runs finish within the consumer's close timeout, then lets go of the rest. */
    @Override
    void close();
}
