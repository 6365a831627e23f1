package dev.idem.testkit;

import dev.idem.testkit.internal.RocketMqReader;
import java.util.List;

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

    /**
     * Every message of {@code topic} written so far (up to each queue's end offset at the call), pulled
     * by offset without a consumer group's state: a dead-letter topic's letters ({@code <topic>_DLQ}),
     * say. Wait for what is still on its way with Awaitility.
     *
     * @return the messages in queue order, then offset order, with their user properties as headers;
     *         empty when the topic does not exist
     * @throws IllegalStateException if the broker cannot be read
     */
    default List<TopicMessage> read(String topic) {
        return RocketMqReader.read(nameServerAddress(), topic);
    }
}
