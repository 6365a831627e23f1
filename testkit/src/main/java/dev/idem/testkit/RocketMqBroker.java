package dev.idem.testkit;

/**
 * A running RocketMQ name server and broker for tests, with every delay level set to one second so
 * that redeliveries come back quickly. Thread-safe.
 */
public interface RocketMqBroker {

    /** The {@code namesrvAddr} value clients connect with. */
    String nameServerAddress();

    /**
     * Creates a topic with the given number of read and write queues and waits until its route is
     * known to the name server.
     *
     * @throws IllegalStateException if the broker refuses or does not answer in time
     */
    void createTopic(String topic, int queues);

    /**
     * Creates the retry topic {@code %RETRY%<consumerGroup>} ahead of the consumer's start: without
     * it the group's first redelivery waits for the broker to create it (about 40 seconds).
     */
    void createRetryTopic(String consumerGroup);
}
