package dev.idem.core.outbox;

import java.util.List;

/**
 * Publishes committed outbox rows to a broker: what a broker adapter implements for the
 * {@link OutboxRelay} ({@code KafkaOutboxPublisher}, {@code RocketMqOutboxPublisher}). Publication is at
 * least once (a relay that dies after publishing and before marking the row publishes it again), so
 * every message carries its {@link OutboxHeaders#MESSAGE_ID}. Called from one relay thread at a time.
 */
public interface OutboxPublisher extends AutoCloseable {

    /**
     * Publishes {@code records} (the oldest unsent rows of the partitions the relay holds, in the
     * order written: a key's rows must reach the broker in this order) and waits until each is
     * acknowledged by the broker or has failed.
     *
     * @return one result per record, in the same order
     */
    List<Result> publish(List<OutboxRecord> records) throws InterruptedException;

    /** Releases the broker client; the default does nothing. */
    @Override
    default void close() {
    }

    /** What became of one record. */
    sealed interface Result permits Published, Retry, Poison {
    }

    /** The broker has it. */
    record Published() implements Result {
        /** The one instance. */
        public static final Published INSTANCE = new Published();
    }

    /**
     * Not published this time (the broker unreachable, a timeout): tried again on a later pass. A
     * later row of its key that was published meanwhile stays published (decision 0056).
     */
    record Retry(String reason) implements Result {
    }

    /**
     * Never publishable as it is (a destination that does not exist, a message over the broker's
     * size): the row goes to the dead state with {@code reason} and no longer holds up the others.
     */
    record Poison(String reason) implements Result {
    }
}
