package dev.idem.core;

/**
 * Where a processor reads elapsed time: how long a claim's lease is known to hold, and how long
 * finished keys of a batch have waited for their completion. Only differences between readings
 * mean anything, as with {@link System#nanoTime()}. Tests give a processor a ticker they move by
 * hand, so a lease can pass without sleeping through it. Thread-safe.
 */
@FunctionalInterface
public interface Ticker {

    /** Nanoseconds from an arbitrary origin; never goes backwards. */
    long nanos();

    /** {@link System#nanoTime()}: the default. */
    static Ticker system() {
        return System::nanoTime;
    }
}
