package dev.idem.core;

/**
 * Where a consumer Idem runs stands, the same for every broker: health checks and tests read it
 * from {@code state()} on the Kafka, Kafka share-group and RocketMQ consumers.
 */
public enum ConsumerState {
    /** Built, not started. */
    NEW,
    /** Started, not yet consuming (a Kafka consumer not yet a member of its group, say). */
    STARTING,
    /** Consuming. */
    RUNNING,
    /** Closed. */
    STOPPED,
    /** Stopped by a failure it cannot recover from (the consumer's {@code failure()} says which). */
    FAILED;

    /** Started and neither closed nor failed: {@link #STARTING} or {@link #RUNNING}. */
    public boolean isLive() {
        return this == STARTING || this == RUNNING;
    }
}
