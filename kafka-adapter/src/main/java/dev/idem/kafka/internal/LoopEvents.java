package dev.idem.kafka.internal;

/** What an Idem Kafka consumer hears from its poll thread. */
public interface LoopEvents {

    /** The consumer is in its group: its first assignment (or, in a share group, its first poll). */
    void joined();

    /** A failure the consumer survived, or (fatal) the one that stopped it. */
    void failed(Throwable failure, boolean fatal);

    /** The poll thread has closed the Kafka client and is ending. */
    void ended();
}
