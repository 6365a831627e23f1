package dev.idem.testkit;

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
}
