package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.Envelope;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.core.spi.DeadLetterPublisherContract;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RocketMqBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The dead-letter contract on the test kit's RocketMQ broker, and what only RocketMQ messages carry. */
@IdemTestKit
class RocketMqDeadLetterPublisherIT extends DeadLetterPublisherContract {

    private static RocketMqBroker rocketMq;

    @BeforeAll
    static void broker(RocketMqBroker broker) {
        rocketMq = broker;
    }

    @Override
    protected void createTopic(String topic) {
        rocketMq.createTopic(topic, 1);
    }

    @Override
    protected Envelope sendAndConsume(String topic, Original original) throws Exception {
        Message message = new Message(topic, original.body());
        if (original.key() != null) {
            message.setKeys(original.key());
        }
        original.headers().forEach(message::putUserProperty);
        return RocketMqEnvelopes.of(sendAndConsume(message));
    }

    /** Sends the message as it is and returns it as a consumer receives it. */
    private MessageExt sendAndConsume(Message message) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names().group("producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.setInstanceName(UUID.randomUUID().toString());
        producer.start();
        try {
            producer.send(message);
        } finally {
            producer.shutdown();
        }
        return first(message.getTopic());
    }

    @Override
    protected DeadLetterPublisher publisher(DeadLetterRouting routing) {
        return RocketMqDeadLetterPublisher.start(rocketMq.nameServerAddress(), names().group(), routing);
    }

    @Override
    protected String deadLetterSuffix() {
        return "_DLQ";
    }

    @Override
    protected Received readFirst(String topic) throws Exception {
        MessageExt message = first(topic);
        List<Map.Entry<String, String>> properties = new ArrayList<>();
        message.getProperties().forEach((name, value) -> {
            if (!MessageConst.STRING_HASH_SET.contains(name)) {
                properties.add(new SimpleImmutableEntry<>(name, value));
            }
        });
        String keys = message.getKeys();
        return new Received(keys == null ? null : keys.getBytes(StandardCharsets.UTF_8), message.getBody(), properties);
    }

    /**
     * The first message of a topic, pulled by offset from the start of each queue. Pulling by offset
     * has no consumer offset to start from and no seek to race with, which a lite pull consumer's
     * {@code seekToBegin} has.
     */
    @SuppressWarnings("deprecation") // DefaultMQPullConsumer: the client's one API for pulling by offset.
    private MessageExt first(String topic) throws Exception {
        DefaultMQPullConsumer reader = new DefaultMQPullConsumer(names().group("reader-" + UUID.randomUUID()));
        reader.setNamesrvAddr(rocketMq.nameServerAddress());
        reader.setInstanceName(UUID.randomUUID().toString());
        reader.start();
        try {
            List<MessageExt> read = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollInterval(Duration.ofMillis(100)).until(() -> {
                for (MessageQueue queue : reader.fetchSubscribeMessageQueues(topic)) {
                    PullResult result = reader.pull(queue, "*", 0, 1, 3_000);
                    if (result.getPullStatus() == PullStatus.FOUND) {
                        read.addAll(result.getMsgFoundList());
                    }
                }
                return !read.isEmpty();
            });
            return read.get(0);
        } finally {
            reader.shutdown();
        }
    }

    @Test
    void theOriginalTagsAndEveryKeyArrive() throws Exception {
        // Given a message with tags and two keys
        Message message = new Message(source(), "created", "order-42 order-43", "{}".getBytes(StandardCharsets.UTF_8));
        Envelope original = RocketMqEnvelopes.of(sendAndConsume(message));

        // When it is dead-lettered
        publisher().publish(letter(original, 5, "attempts exhausted", new IllegalStateException("boom")));

        // Then a reader filtering on the tags or looking the keys up finds it
        MessageExt deadLetter = first(deadLetterTopic());
        assertThat(deadLetter.getTags()).isEqualTo("created");
        assertThat(deadLetter.getKeys()).isEqualTo("order-42 order-43");
    }
}
