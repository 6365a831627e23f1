package dev.idem.core;

import java.util.Objects;

/**
 * Messages claimed together in one round trip ({@link IdempotentProcessor#open}), processed one by
 * one, and completed together in one more round trip sent by {@link #close()}, which does not wait
 * for it (decision 0007): the adapter acknowledges the broker meanwhile. Until then every claimed
 * key stays held and its lease renewed, finished or not, so no other consumer can run it.
 *
 * <p>Thread-safe: several threads may process different messages (one per partition, say); a copy
 * of a key running on one thread waits for it on another (at most a second, then {@link Outcome.Busy})
 * and is settled as the first run was. {@link #close()} waits for messages
 * still running; {@link #abandon()} does not. A handle: the protocol itself is in one class,
 * {@code Protocol}.
 *
 * @param <T> payload type
 */
public final class Batch<T> implements AutoCloseable {

    private final Protocol<T> protocol;
    private final Round<T> round;

    Batch(Protocol<T> protocol, Round<T> round) {
        this.protocol = protocol;
        this.round = round;
    }

    /** How many messages the batch holds. */
    public int size() {
        return round.size();
    }

    /**
     * Processes message {@code index} through the fixed order. A key seen earlier in the same batch
     * is not run again: it is a duplicate of an earlier success, or waits for the redelivery of an
     * earlier failure.
     *
     * @throws IllegalStateException if the batch is closed
     */
    public Outcome process(int index) {
        return protocol.run(round, index);
    }

    /**
     * For one of several callers sharing a batch, each processing its own messages, done with
     * messages {@code from} (inclusive) to {@code to} (exclusive): releases now the claims of those
     * never started, so their redelivery finds them free while the rest of the batch runs; a copy of
     * one of their keys elsewhere in the batch is Busy from then on. Finished keys that have waited a
     * second or more for the batch's completion are completed on the way. The batch stays open. Does
     * nothing once the batch is closing or closed (its close releases what never started).
     *
     * @throws IndexOutOfBoundsException if the range is not within the batch
     */
    public void release(int from, int to) {
        Objects.checkFromToIndex(from, to, size());
        protocol.release(round, from, to);
    }

    /**
     * For a consumer that cannot go on (an error it cannot handle): without waiting for messages
     * still running, completes every key whose outcome is known and releases the keys never started.
     * A key whose handler was running keeps its claim until the lease expires, as after a crash, and
     * its next run is counted.
     */
    public void abandon() {
        protocol.abandon(round);
    }

    /**
     * Waits for messages still running, releases the claims of messages never started, and sends the
     * completion of the finished ones without waiting for it. Store failures are logged, not thrown.
     * Closing twice does nothing.
     */
    @Override
    public void close() {
        protocol.close(round);
    }
}
