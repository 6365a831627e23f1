package dev.idem.benchmarks.soak;

import dev.idem.testkit.RocketMqBroker;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.admin.TopicOffset;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * The soak on the test kit's RocketMQ: dead letters in {@code <topic>_DLQ}; the broker's own
 * {@code %DLQ%<group>} (messages RocketMQ gave up on behind Idem's back) is reported too.
 */
final class RocketMqSoakBroker implements SoakBroker {

    private static final long TIMEOUT_SECONDS = 30;

    private final RocketMqBroker rocketMq;
    private final DefaultMQProducer producer;
    private final DefaultMQAdminExt admin;
    private final Map<String, List<MessageQueue>> queues = new HashMap<>();

    RocketMqSoakBroker(RocketMqBroker rocketMq, String run) throws Exception {
        this.rocketMq = rocketMq;
        producer = new DefaultMQProducer("soak-producer-" + run);
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.setInstanceName("soak-producer-" + run);
        producer.start();
        admin = new DefaultMQAdminExt(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        admin.setNamesrvAddr(rocketMq.nameServerAddress());
        admin.setInstanceName("soak-admin-" + run);
        admin.start();
    }

    @Override
    public String name() {
        return "rocketmq";
    }

    @Override
    public String address() {
        return rocketMq.nameServerAddress();
    }

    @Override
    public void create(String topic, int partitions, String group) {
        rocketMq.createTopic(topic, partitions);
        rocketMq.createTopic(deadLetterTopic(topic), 2);
        rocketMq.createRetryTopic(group);
    }

    @Override
    public void send(String topic, String id, int partition) throws Exception {
        Message message = new Message(topic, id.getBytes(StandardCharsets.UTF_8));
        message.setKeys(id);
        SendResult result = producer.send(message, queues(topic).get(partition), TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        if (result.getSendStatus() != SendStatus.SEND_OK) {
            throw new IllegalStateException("send of " + id + " answered " + result.getSendStatus());
        }
    }

    private synchronized List<MessageQueue> queues(String topic) throws Exception {
        List<MessageQueue> known = queues.get(topic);
        if (known == null) {
            known = new ArrayList<>(producer.fetchPublishMessageQueues(topic));
            known.sort(Comparator.comparingInt(MessageQueue::getQueueId));
            queues.put(topic, known);
        }
        return known;
    }

    @Override
    public String deadLetterTopic(String topic) {
        return topic + "_DLQ";
    }

    @Override
    public Map<String, Integer> deadLetters(String topic) throws Exception {
        String dlq = deadLetterTopic(topic);
        long expected = messages(dlq);
        Map<String, Integer> copies = new HashMap<>();
        DefaultLitePullConsumer reader = new DefaultLitePullConsumer("soak-reader-" + System.nanoTime());
        reader.setNamesrvAddr(rocketMq.nameServerAddress());
        reader.setInstanceName("soak-reader-" + System.nanoTime());
        reader.setAutoCommit(false);
        reader.start();
        try {
            List<MessageQueue> dlqQueues = new ArrayList<>(reader.fetchMessageQueues(dlq));
            reader.assign(dlqQueues);
            for (MessageQueue queue : dlqQueues) {
                reader.seekToBegin(queue);
            }
            long read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            while (read < expected) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("read " + read + " of " + expected + " messages of " + dlq);
                }
                for (MessageExt message : reader.poll(200)) {
                    copies.merge(new String(message.getBody(), StandardCharsets.UTF_8), 1, Integer::sum);
                    read++;
                }
            }
        } finally {
            reader.shutdown();
        }
        return copies;
    }

    /** Messages stored in a topic, or 0 when it does not exist. */
    private long messages(String topic) {
        try {
            long sum = 0;
            for (TopicOffset offset : admin.examineTopicStats(topic).getOffsetTable().values()) {
                sum += offset.getMaxOffset() - offset.getMinOffset();
            }
            return sum;
        } catch (Exception noSuchTopic) {
            return 0;
        }
    }

    @Override
    public long lag(String group, String topic) throws Exception {
        return admin.examineConsumeStats(group).computeTotalDiff();
    }

    @Override
    public Map<String, Long> extraFigures(String group) {
        return Map.of("messages RocketMQ moved to " + MixAll.getDLQTopic(group) + " itself", messages(MixAll.getDLQTopic(group)));
    }

    @Override
    public void close() {
        producer.shutdown();
        admin.shutdown();
    }
}
