package dev.idem.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts one variant's messages from the first one's arrival, and says when the variant is done:
 * every message consumed, or the time limit reached. Thread-safe.
 */
final class Meter {

    // A variant that has not seen its first message by then is broken, not slow.
    private static final Duration FIRST_MESSAGE_TIMEOUT = Duration.ofSeconds(60);

    /**
     * What a variant consumed in how long, and for the PostgreSQL table what the database saw (else
     * null); {@code consumed} is every message the run consumed, which its Redis commands and CPU are
     * divided by (the PostgreSQL table drains its topic after the messages it times).
     */
    record Measured(long messages, double seconds, Result.Database database, long consumed) {

        Measured(long messages, double seconds) {
            this(messages, seconds, null, messages);
        }
    }

    private final AtomicLong count = new AtomicLong();
    private final AtomicLong first = new AtomicLong();

    /** A message (or a poll of them) arrived. */
    void arrived() {
        if (first.get() == 0) {
            first.compareAndSet(0, System.nanoTime());
        }
    }

    /** {@code messages} were handled. */
    void handled(int messages) {
        arrived();
        count.addAndGet(messages);
    }

    long handledSoFar() {
        return count.get();
    }

    /** Waits until {@code messages} were handled or {@code limit} passed since the first arrival. */
    Measured await(long messages, Duration limit) throws InterruptedException {
        long waitingSince = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            long started = first.get();
            long handled = count.get();
            if (handled >= messages || (started != 0 && now - started >= limit.toNanos())) {
                return new Measured(handled, (now - started) / 1e9);
            }
            if (started == 0 && now - waitingSince > FIRST_MESSAGE_TIMEOUT.toNanos()) {
                throw new IllegalStateException("no message within " + FIRST_MESSAGE_TIMEOUT);
            }
            TimeUnit.MILLISECONDS.sleep(1);
        }
    }
}
