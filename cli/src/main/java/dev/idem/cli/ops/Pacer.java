package dev.idem.cli.ops;

import java.util.concurrent.locks.LockSupport;

/** Spaces sends to at most a given number per second ({@code --rate}); none when unlimited. Not thread-safe. */
public final class Pacer {

    private final long intervalNanos;
    private long next;

    /** A pacer for {@code perSecond} messages a second; 0 for no limit. */
    public Pacer(double perSecond) {
        this.intervalNanos = perSecond <= 0 ? 0 : (long) (1_000_000_000L / perSecond);
    }

    /** Waits until the next message may go. */
    public void await() {
        if (intervalNanos == 0) {
            return;
        }
        long now = System.nanoTime();
        if (next == 0) {
            next = now;
        }
        while (now < next) {
            LockSupport.parkNanos(next - now);
            now = System.nanoTime();
        }
        next += intervalNanos;
    }
}
