package dev.idem.rocketmq;

import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.Envelope;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.rocketmq.internal.ClientSettings;
import dev.idem.rocketmq.internal.InstanceNames;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Publishes dead letters to RocketMQ, {@code <topic>_DLQ} by default (RocketMQ topic names cannot
 * contain '.'): the original body, tags and keys, the original user properties and Idem's
 * {@code idem-} headers as user properties, none blank (RocketMQ refuses blank property values).
 * Sends synchronously and accepts only {@code SEND_OK}. The dead-letter topic must exist, or the
 * broker must allow topic auto-creation. Thread-safe.
 */
public final class RocketMqDeadLetterPublisher implements DeadLetterPublisher, AutoCloseable {

    private final DefaultMQProducer producer;
    private final DeadLetterRouting routing;

    private RocketMqDeadLetterPublisher(DefaultMQProducer producer, DeadLetterRouting routing) {
        this.producer = producer;
        this.routing = routing;
    }

    /**
     * A publisher reaching the broker as {@code consumer} does: its own producer in group
     * {@code idem-dlq-<consumerGroup>}, with the consumer's RPC hook (ACL), namespace, TLS, access
     * channel and other client settings, started here.
     *
     * @throws IllegalStateException if the producer cannot start
     */
    public static RocketMqDeadLetterPublisher start(DefaultMQPushConsumer consumer, DeadLetterRouting routing) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(routing, "routing");
        String group = "idem-dlq-" + consumer.getConsumerGroup();
        DefaultMQProducer producer = new DefaultMQProducer(group, ClientSettings.rpcHook(consumer));
        ClientSettings.copy(consumer, producer, InstanceNames.next(group));
        return start(producer, routing, consumer.getConsumerGroup());
    }

    /**
     * A publisher with its own plain producer (no ACL, namespace or TLS) in group
     * {@code idem-dlq-<consumerGroup>}, started here. Prefer {@link #start(DefaultMQPushConsumer, DeadLetterRouting)}.
     *
     * @throws IllegalStateException if the producer cannot start
     */
    public static RocketMqDeadLetterPublisher start(String nameServerAddress, String consumerGroup,
                                                    DeadLetterRouting routing) {
        Objects.requireNonNull(nameServerAddress, "nameServerAddress");
        Objects.requireNonNull(routing, "routing");
        DefaultMQProducer producer = new DefaultMQProducer("idem-dlq-" + consumerGroup);
        producer.setNamesrvAddr(nameServerAddress);
        producer.setInstanceName(InstanceNames.next("idem-dlq-" + consumerGroup));
        return start(producer, routing, consumerGroup);
    }

    private static RocketMqDeadLetterPublisher start(DefaultMQProducer producer, DeadLetterRouting routing,
                                                     String consumerGroup) {
        try {
            producer.start();
        } catch (MQClientException e) {
            throw new IllegalStateException("could not start the dead-letter producer for " + consumerGroup, e);
        }
        return new RocketMqDeadLetterPublisher(producer, routing);
    }

    @Override
    public void publish(DeadLetter deadLetter) throws Exception {
        SendResult result = producer.send(message(deadLetter, routing));
        if (result.getSendStatus() != SendStatus.SEND_OK) {
            throw new IllegalStateException("dead letter for " + deadLetter.key() + " not stored: "
                    + result.getSendStatus());
        }
    }

    /** The dead-letter message: body, tags and keys of the original, its properties, Idem's headers. */
    static Message message(DeadLetter deadLetter, DeadLetterRouting routing) {
        Envelope envelope = deadLetter.envelope();
        Message message = new Message(routing.deadLetterTopic(envelope.topic()), envelope.body());
        Optional<MessageExt> original = envelope.source(MessageExt.class);
        String tags = original.map(MessageExt::getTags).orElse(null);
        if (tags != null && !tags.isBlank()) {
            message.setTags(tags);
        }
        String keys = original.map(MessageExt::getKeys)
                .orElse(envelope.messageKey() == null ? null : new String(envelope.messageKey(), StandardCharsets.UTF_8));
        if (keys != null && !keys.isBlank()) {
            message.setKeys(keys);
        }
        // The original user properties as they were (the envelope's text encodes a value starting with
        // b64:), else the envelope's; blank values are left out (RocketMQ refuses them: the whole dead
        // letter would never be published), and earlier idem- ones, replaced by this letter's.
        Map<String, String> properties = new LinkedHashMap<>(original.map(MessageExt::getProperties)
                .orElse(envelope.headers()));
        properties.keySet().removeIf(name -> MessageConst.STRING_HASH_SET.contains(name) || DeadLetterHeaders.isIdemHeader(name));
        properties.putAll(deadLetter.idemHeaders());
        properties.forEach((name, value) -> {
            if (!name.isBlank() && value != null && !value.isBlank()) {
                message.putUserProperty(name, value);
            }
        });
        return message;
    }

    @Override
    public void close() {
        producer.shutdown();
    }
}
