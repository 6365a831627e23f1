package dev.idem.core;

import dev.idem.core.spi.DeadLetterPublisher;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** A dead-letter publisher for unit tests: keeps what it publishes, and can be told to fail. */
public final class RecordingPublisher implements DeadLetterPublisher {

    private final List<DeadLetter> published = new CopyOnWriteArrayList<>();
    private final AtomicInteger failuresLeft = new AtomicInteger();
    private final AtomicInteger attempts = new AtomicInteger();

    /** The next {@code count} publishes throw, as a broker that does not acknowledge. */
    public void failNext(int count) {
        failuresLeft.set(count);
    }

    /** Everything published so far. */
    public List<DeadLetter> published() {
        return published;
    }

    /** How many publishes were tried, failed or not. */
    public int attempts() {
        return attempts.get();
    }

    @Override
    public void publish(DeadLetter deadLetter) {
        attempts.incrementAndGet();
        if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("broker did not acknowledge the dead letter");
        }
        published.add(deadLetter);
    }
}
