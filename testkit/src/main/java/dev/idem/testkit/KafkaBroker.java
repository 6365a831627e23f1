package dev.idem.testkit;

import dev.idem.testkit.internal.KafkaReader;
import java.util.List;

/**
 * A running Kafka cluster for tests. Thread-safe.
 */
public interface KafkaBroker {

    /** The {@code bootstrap.servers} value clients connect with. */
    String bootstrapServers();

    /**
     * Creates a topic and waits until its partitions are visible to clients.
     *
     * @throws IllegalStateException if the broker refuses or does not answer in time
     */
    void createTopic(String topic, int partitions);

    /**
     * Every record of {@code topic} written so far (up to each partition's end offset at the call),
     * read without a consumer group: a dead-letter topic's letters, say. Wait for what is still on its
     * way with Awaitility: {@code await().until(() -> kafka.read("orders.DLT").size() == 1)}.
     *
     * @return the records in partition order, then offset order; empty when the topic does not exist
     * @throws IllegalStateException if the broker stops answering mid-read
     */
    default List<TopicMessage> read(String topic) {
        return KafkaReader.read(bootstrapServers(), topic);
    }
}
