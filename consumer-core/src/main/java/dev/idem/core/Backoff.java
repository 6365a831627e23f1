package dev.idem.core;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/** How long to wait before attempt {@code n + 1} after attempt {@code n} failed. Thread-safe. */
@FunctionalInterface
public interface Backoff {

    /**
     * @param failedAttempt the attempt that failed, from 1
     * @return the delay before the next attempt, never negative
     */
    Duration delay(int failedAttempt);

    /** The first delay of the processor's default backoff, {@link #standard()}: 1 s. */
    Duration DEFAULT_INITIAL = Duration.ofSeconds(1);
    /** The largest delay of the processor's default backoff: 1 min. */
    Duration DEFAULT_MAX = Duration.ofMinutes(1);
    /** The jitter of the processor's default backoff: 0.2 (± 20%). */
    double DEFAULT_JITTER = 0.2;

    /**
     * The processor's default: exponential from 1 s to 1 min with 20% jitter, so five attempts span
     * about 15 s and a failover of a few seconds is ridden out.
     */
    static Backoff standard() {
        return exponential(DEFAULT_INITIAL, DEFAULT_MAX, DEFAULT_JITTER);
    }

    /** The same delay every time. */
    static Backoff fixed(Duration delay) {
        requireNonNegative("delay", delay);
        return failedAttempt -> delay;
    }

    /**
     * {@code initial * 2^(attempt-1)}, capped at {@code max}, then spread by up to {@code jitter}
     * (a fraction, 0 to 1) either way, so that redeliveries of many messages do not arrive together.
     *
     * @throws IllegalArgumentException if initial is not positive, max is below initial, or jitter is outside [0, 1]
     */
    static Backoff exponential(Duration initial, Duration max, double jitter) {
        requireNonNegative("initial", initial);
        if (initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("need 0 < initial <= max but initial was " + initial + " and max " + max);
        }
        if (jitter < 0 || jitter > 1) {
            throw new IllegalArgumentException("jitter must be between 0 and 1 but was " + jitter);
        }
        long initialMillis = initial.toMillis();
        long maxMillis = max.toMillis();
        return failedAttempt -> {
            int doublings = Math.min(Math.max(failedAttempt - 1, 0), 30);
            long base = Math.min(maxMillis, initialMillis << doublings);
            double spread = 1 + jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
            return Duration.ofMillis(Math.min(maxMillis, Math.round(base * spread)));
        };
    }

    private static void requireNonNegative(String name, Duration duration) {
        if (duration == null || duration.isNegative()) {
            throw new IllegalArgumentException(name + " must be >= 0 but was " + duration);
        }
    }
}
