package dev.idem.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What an adapter must do with the broker after an outcome: acknowledge the message, or have it
 * delivered again after a delay. Adapters read this; they never re-decide. Immutable.
 *
 * @param action what to do
 * @param delay  how long to wait before the redelivery; zero when acknowledging
 */
public record Disposition(Action action, Duration delay) {

    /** The two things an adapter can do with a message. */
    public enum Action {
        /** Commit the offset / return consume success. */
        ACKNOWLEDGE,
        /** Seek back and pause / reconsume later. */
        REDELIVER
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

    /** Leave the message unacknowledged and have it delivered again after {@code delay}. */
    public static Disposition redeliverAfter(Duration delay) {
        return new Disposition(Action.REDELIVER, delay);
    }

    /** Whether the adapter must acknowledge the message. */
    public boolean acknowledges() {
        return action == Action.ACKNOWLEDGE;
    }
}
