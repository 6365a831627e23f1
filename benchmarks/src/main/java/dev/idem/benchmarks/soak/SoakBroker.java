package dev.idem.benchmarks.soak;

import java.util.Map;

/** The broker side of the soak: topics, sending copies, and reading what is left at the end. */
interface SoakBroker extends AutoCloseable {

    /** {@code kafka} or {@code rocketmq}, as {@link ConsumerSpec#broker()}. */
    String name();

    /** What consumers connect to. */
    String address();

    /** Creates the topic with {@code partitions} partitions (queues) and what the group needs ahead of time. */
    void create(String topic, int partitions, String group);

    /**
     * Sends one copy of {@code id} to partition (queue) {@code partition} and waits for the broker's
     * acknowledgement.
     *
     * @throws Exception if the broker did not acknowledge it
     */
    void send(String topic, String id, int partition) throws Exception;

    /** Where Idem's dead letters of {@code topic} go. */
    String deadLetterTopic(String topic);

    /** Copies per id in the dead-letter topic, read from its beginning to its end. */
    Map<String, Integer> deadLetters(String topic) throws Exception;

    /** Messages of {@code topic} (and the group's retry topic) the group has not acknowledged. */
    long lag(String group, String topic) throws Exception;

    /** Figures only this broker has, for the report (e.g. messages the broker dead-lettered itself). */
    Map<String, Long> extraFigures(String group) throws Exception;
}
