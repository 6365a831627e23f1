package dev.idem.testkit.internal;

import dev.idem.testkit.TopicMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/** Reads a RocketMQ topic by offset, every queue from its start to its end of the moment, without a group's state. */
public final class RocketMqReader {

    private static final long PULL_TIMEOUT_MILLIS = 3_000;

    private RocketMqReader() {
    }

    /** Every message of {@code topic} written so far, queue by queue; none when it does not exist. */
    @SuppressWarnings("deprecation") // DefaultMQPullConsumer: the client's one API for pulling by offset.
    public static List<TopicMessage> read(String nameServer, String topic) {
        DefaultMQPullConsumer reader = new DefaultMQPullConsumer("idem-testkit-reader-" + System.nanoTime());
        reader.setNamesrvAddr(nameServer);
        reader.setInstanceName("idem-testkit-reader-" + System.nanoTime());
        List<TopicMessage> all = new ArrayList<>();
        try {
            reader.start();
            List<MessageQueue> queues;
            try {
                queues = new ArrayList<>(reader.fetchSubscribeMessageQueues(topic));
            } catch (Exception noRoute) {
                return all;   // no such topic yet
            }
            queues.sort(MessageQueue::compareTo);
            for (MessageQueue queue : queues) {
                long offset = reader.minOffset(queue);
                long end = reader.maxOffset(queue);
                while (offset < end) {
                    PullResult result = reader.pull(queue, "*", offset, 32, PULL_TIMEOUT_MILLIS);
                    if (result.getPullStatus() == PullStatus.FOUND) {
                        result.getMsgFoundList().forEach(m -> all.add(message(topic, m)));
                    }
                    if (result.getNextBeginOffset() <= offset) {
                        break;
                    }
                    offset = result.getNextBeginOffset();
                }
            }
            return all;
        } catch (Exception e) {
            throw new IllegalStateException("could not read " + topic + " from " + nameServer, e);
        } finally {
            reader.shutdown();
        }
    }

    // NullAway reads a nullable array (byte @Nullable []) from another module's classes only in its
    // JSpecify mode, which fails on Java 17: the key passed here may be null, as the record says.
    @SuppressWarnings("NullAway")
    private static TopicMessage message(String topic, MessageExt message) {
        String keys = message.getKeys();
        Map<String, String> user = new HashMap<>(message.getProperties() == null ? Map.of() : message.getProperties());
        // RocketMQ's own properties (keys, tags, delay, retry topic...) are not the sender's.
        user.keySet().removeAll(MessageConst.STRING_HASH_SET);
        return new TopicMessage(topic, keys == null ? null : keys.getBytes(StandardCharsets.UTF_8), message.getBody(),
                user, message);
    }
}
