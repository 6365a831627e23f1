package dev.idem.kafka.internal;

import dev.idem.core.Ticker;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock whose instants advance with a {@link Ticker} from the wall-clock time it was made: never
 * backwards, never a jump when NTP steps the wall clock. For deadlines within one process (lock
 * renewals, backoffs), not for times shown to people. Thread-safe.
 */
public final class MonotonicClock extends Clock {

    private final Ticker ticker;
    private final Instant origin;
    private final long originNanos;

    private MonotonicClock(Ticker ticker, Instant origin, long originNanos) {
        this.ticker = ticker;
        this.origin = origin;
        this.originNanos = originNanos;
    }

    /** A clock that advances as {@code ticker} does, from now. */
    public static Clock of(Ticker ticker) {
        return new MonotonicClock(ticker, Instant.now(), ticker.nanos());
    }

    @Override
    public Instant instant() {
        return origin.plusNanos(ticker.nanos() - originNanos);
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
