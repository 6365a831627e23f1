package dev.idem.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What an adapter must do with the broker after an outcome: acknowledge the message, or have it
 * delivered again after a delay, and why, where a broker treats the reasons differently (a redelivery
 * that spends a broker's count, a lock that can be held instead of released). Adapters read this;
 * they never re-decide, and never look at an outcome's class. Immutable.
 *
 * @param action what to do
 * @param delay  how long to wait before the redelivery; zero when acknowledging
 */
public record Disposition(Action action, Duration delay) {

    /** What to do with a message, and why. */
    public enum Action {
        /** Commit the offset / return consume success: applied, or settled for good. */
        ACKNOWLEDGE,
        /** A run failed and was counted: redeliver after the backoff, as a new attempt. */
        RETRY,
        /** Another consumer holds the key: nothing ran; try again when its lease may have ended. */
        BUSY,
        /** Infrastructure trouble (Redis, the business check, the dead-letter topic): nothing ran or
         *  was counted; try again after the backoff. */
        DEFER
    }

    private static final Disposition ACKNOWLEDGE = new Disposition(Action.ACKNOWLEDGE, Duration.ZERO);

    /** @throws IllegalArgumentException if the delay is negative, or non-zero on an acknowledgement */
    public Disposition {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || (action == Action.ACKNOWLEDGE && !delay.isZero())) {
            throw new IllegalArgumentException("delay must be >= 0, and 0 when acknowledging, but was " + delay);
        }
    }

    /** Acknowledge the message: its effect is applied or it is settled for good. */
    public static Disposition acknowledge() {
        return ACKNOWLEDGE;
    }

    /** Whether the adapter must acknowledge the message. */
    public boolean acknowledges() {
        return action == Action.ACKNOWLEDGE;
    }

    /**
     * Whether the redelivery comes with no run counted against the message ({@link Action#BUSY},
     * {@link Action#DEFER}): a broker that counts redeliveries (RocketMQ's {@code reconsumeTimes}, a
     * share group's delivery count) should not spend its count on it where it can be avoided.
     */
    public boolean uncounted() {
        return action == Action.BUSY || action == Action.DEFER;
    }
}
