package dev.idem.core.memory;

import dev.idem.core.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time a test moves by hand, both as a {@link Clock} (timestamps, backoff deadlines, the in-memory
 * store's leases) and as a {@link Ticker} (how long a processor's leases hold): give the same one
 * to the processor's {@code clock} and {@code ticker} and to the {@link InMemoryClaimStore}, and a
 * lease passes without sleeping through it. Only moves forward. Thread-safe.
 */
public final class ManualClock extends Clock implements Ticker {

    private final Instant start;
    private final AtomicLong elapsedNanos = new AtomicLong();

    /** Starting now. */
    public ManualClock() {
        this(Instant.now());
    }

    /** Starting at {@code start}. */
    public ManualClock(Instant start) {
        this.start = start;
    }

    /**
     * Moves time forward.
     *
     * @throws IllegalArgumentException if {@code duration} is negative
     */
    public void advance(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("time only moves forward, not by " + duration);
        }
        elapsedNanos.addAndGet(duration.toNanos());
    }

    @Override
    public long nanos() {
        return elapsedNanos.get();
    }

    @Override
    public Instant instant() {
        return start.plusNanos(elapsedNanos.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
