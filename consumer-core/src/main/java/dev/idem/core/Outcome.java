package dev.idem.core;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What happened to one delivery. Each outcome carries its {@link Disposition}, so adapters never
 * switch on the outcome's class. Immutable.
 */
public sealed interface Outcome {

    /** The delivery's idempotency key (the broker's message id when the message had none). */
    IdempotencyKey key();

    /** What the adapter must do with the broker. */
    Disposition disposition();

    /**
     * The handler ran and its effect is recorded.
     *
     * @param fence     the claim's fencing token
     * @param attempt   the attempt that succeeded
     * @param leaseLost true when the claim's lease was lost while the handler ran (another owner may
     *                  have taken over; the business check is what kept the effect single)
     */
    record Applied(IdempotencyKey key, long fence, int attempt, boolean leaseLost) implements Outcome {
        @Override
        public Disposition disposition() {
            return Disposition.acknowledge();
        }
    }

    /**
     * The effect already existed: recorded in Redis, found by the business check, or refused by the
     * system of record. The handler did not apply it again.
     *
     * @param reason where the earlier effect was found
     */
    record Duplicate(IdempotencyKey key, String reason) implements Outcome {
        @Override
        public Disposition disposition() {
            return Disposition.acknowledge();
        }
    }

    /**
     * Another owner holds a live claim on the key. Never "drop": the other owner may still fail.
     *
     * @param retryAfter when to try again
     */
    record Busy(IdempotencyKey key, Duration retryAfter) implements Outcome {
        @Override
        public Disposition disposition() {
            return new Disposition(Disposition.Action.BUSY, retryAfter);
        }
    }

    /**
     * The handler failed; the failure is counted and the claim released for the redelivery.
     *
     * @param attempt the attempt that failed
     * @param cause   the handler's exception
     * @param delay   backoff before the next attempt
     */
    record Retrying(IdempotencyKey key, int attempt, Throwable cause, Duration delay) implements Outcome {
        @Override
        public Disposition disposition() {
            return new Disposition(Disposition.Action.RETRY, delay);
        }
    }

    /**
     * Nothing could be decided now: the claim store is unreachable (fail-closed) or publishing the
     * dead letter failed. Nothing is acknowledged; the message comes back after the delay.
     *
     * @param reason what was unavailable
     * @param cause  the underlying error
     * @param delay  backoff before the redelivery
     */
    record Deferred(IdempotencyKey key, String reason, @Nullable Throwable cause, Duration delay) implements Outcome {
        @Override
        public Disposition disposition() {
            return new Disposition(Disposition.Action.DEFER, delay);
        }
    }

    /**
     * The message is in the dead-letter topic, now or from an earlier delivery.
     *
     * @param attempts handler attempts made
     * @param reason   why it was dead-lettered
     * @param earlier  true when it had been dead-lettered by an earlier delivery
     */
    record DeadLettered(IdempotencyKey key, int attempts, String reason, boolean earlier) implements Outcome {
        @Override
        public Disposition disposition() {
            return Disposition.acknowledge();
        }
    }
}
