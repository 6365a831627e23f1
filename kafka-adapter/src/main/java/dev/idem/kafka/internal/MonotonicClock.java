package dev.idem.kafka.internal;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock whose instants advance with {@code System.nanoTime()} from the wall-clock time it was made:
 * never backwards, never a jump when NTP steps the wall clock. For deadlines within one process (lock
 * renewals, backoffs), not for times shown to people. Thread-safe.
 */
public final class MonotonicClock extends Clock {

    private static final MonotonicClock SYSTEM = new MonotonicClock(Instant.now(), System.nanoTime());

    private final Instant origin;
    private final long originNanos;

    private MonotonicClock(Instant origin, long originNanos) {
        this.origin = origin;
        this.originNanos = originNanos;
    }

    /** The process's monotonic clock. */
    public static Clock system() {
        return SYSTEM;
    }

    @Override
    public Instant instant() {
        return origin.plusNanos(System.nanoTime() - originNanos);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (zone.equals(ZoneOffset.UTC)) {
            return this;
        }
        throw new UnsupportedOperationException("a monotonic clock has no zone but UTC");
    }
}
