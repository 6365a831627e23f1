package dev.idem.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;

@IdemTestKit
class RocketMqSmokeIT {

    private static final int MESSAGES = 1_000;

    @Test
    void everySentMessageIsConsumed(RocketMqBroker rocketMq, TestNames names) throws Exception {
        // Given a topic with four queues and 1,000 messages on it
        rocketMq.createTopic(names.topic(), 4);
        rocketMq.createRetryTopic(names.group());
        Set<String> sent = IntStream.range(0, MESSAGES).mapToObj(i -> "body-" + i).collect(Collectors.toSet());
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            for (String body : sent) {
                SendStatus status = producer.send(new Message(names.topic(), body.getBytes(StandardCharsets.UTF_8)))
                        .getSendStatus();
                assertThat(status).isEqualTo(SendStatus.SEND_OK);
            }
        } finally {
            producer.shutdown();
        }

        // When a push consumer subscribes from the first offset
        Set<String> received = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(names.group());
        consumer.setNamesrvAddr(rocketMq.nameServerAddress());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(names.topic(), "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            messages.forEach(m -> received.add(new String(m.getBody(), StandardCharsets.UTF_8)));
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> received.size() >= MESSAGES);
        } finally {
            consumer.shutdown();
        }

        // Then it has seen exactly the messages that were sent
        assertThat(received).isEqualTo(sent);
    }

    @Test
    void readGivesBackEveryMessageWrittenSoFarWithItsUserProperties(RocketMqBroker rocketMq, TestNames names)
            throws Exception {
        // Given two messages, one with a user property
        String topic = names.topic("read");
        rocketMq.createTopic(topic, 1);
        DefaultMQProducer producer = new DefaultMQProducer(names.group("read-producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            Message letter = new Message(topic, "TagA", "order-1", "{\"id\":1}".getBytes(StandardCharsets.UTF_8));
            letter.putUserProperty("idem-reason", "attempts exhausted");
            assertThat(producer.send(letter).getSendStatus()).isEqualTo(SendStatus.SEND_OK);
            assertThat(producer.send(new Message(topic, "{\"id\":2}".getBytes(StandardCharsets.UTF_8))).getSendStatus())
                    .isEqualTo(SendStatus.SEND_OK);
        } finally {
            producer.shutdown();
        }

        // When the topic is read back
        var read = rocketMq.read(topic);

        // Then both come back in order, with keys, body and only the sender's properties as headers
        assertThat(read).extracting(TopicMessage::text).containsExactly("{\"id\":1}", "{\"id\":2}");
        assertThat(read.get(0).keyText()).isEqualTo("order-1");
        assertThat(read.get(0).headers()).containsExactly(java.util.Map.entry("idem-reason", "attempts exhausted"));
        assertThat(rocketMq.read(names.topic("never-created"))).isEmpty();
    }
}
