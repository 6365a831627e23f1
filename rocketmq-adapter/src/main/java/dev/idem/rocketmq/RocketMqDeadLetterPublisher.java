package dev.idem.rocketmq;

import dev.idem.core.DeadLetter;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.core.DeadLetterRouting;
import java.util.Objects;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/**
 * Publishes dead letters to RocketMQ, {@code <topic>_DLQ} by default (RocketMQ topic names cannot
 * contain '.'): the original body and keys, Idem's {@code idem-} headers as user properties. Sends
 * synchronously and accepts only {@code SEND_OK}. The dead-letter topic must exist, or the broker
 * must allow topic auto-creation. Thread-safe.
 */
public final class RocketMqDeadLetterPublisher implements DeadLetterPublisher, AutoCloseable {

    private final DefaultMQProducer producer;
    private final DeadLetterRouting routing;

    private RocketMqDeadLetterPublisher(DefaultMQProducer producer, DeadLetterRouting routing) {
        this.producer = producer;
        this.routing = routing;
    }

    /**
     * A publisher with its own producer in group {@code idem-dlq-<consumerGroup>}, started here.
     *
     * @throws IllegalStateException if the producer cannot start
     */
    public static RocketMqDeadLetterPublisher start(String nameServerAddress, String consumerGroup,
                                                    DeadLetterRouting routing) {
        Objects.requireNonNull(nameServerAddress, "nameServerAddress");
        Objects.requireNonNull(routing, "routing");
        DefaultMQProducer producer = new DefaultMQProducer("idem-dlq-" + consumerGroup);
        producer.setNamesrvAddr(nameServerAddress);
        producer.setInstanceName("idem-dlq-" + consumerGroup + "-" + System.identityHashCode(producer));
        try {
            producer.start();
        } catch (MQClientException e) {
            throw new IllegalStateException("could not start the dead-letter producer for " + consumerGroup, e);
        }
        return new RocketMqDeadLetterPublisher(producer, routing);
    }

    @Override
    public void publish(DeadLetter deadLetter) throws Exception {
        Message message = new Message(routing.deadLetterTopic(deadLetter.envelope().topic()), deadLetter.envelope().body());
        if (deadLetter.envelope().messageKey() != null) {
            message.setKeys(new String(deadLetter.envelope().messageKey(), java.nio.charset.StandardCharsets.UTF_8));
        }
        deadLetter.headers().forEach(message::putUserProperty);
        SendResult result = producer.send(message);
        if (result.getSendStatus() != SendStatus.SEND_OK) {
            throw new IllegalStateException("dead letter for " + deadLetter.key() + " not stored: "
                    + result.getSendStatus());
        }
    }

    @Override
    public void close() {
        producer.shutdown();
    }
}
