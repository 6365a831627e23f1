package dev.idem.rocketmq;

import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRecord;
import dev.idem.rocketmq.internal.InstanceNames;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.remoting.exception.RemotingException;
import org.jspecify.annotations.Nullable;

/**
 * Publishes outbox rows to RocketMQ, one synchronous send at a time ({@code SEND_OK} only): the row's
 * value as the body, its key as the message keys and the queue selector (a key's messages go to one
 * queue, in the order given), its headers as user properties (blank ones left out: RocketMQ refuses
 * them), {@link OutboxHeaders#MESSAGE_ID} and {@link OutboxHeaders#TRACE_PARENT}. A row that failed
 * holds back the later rows of its destination in that batch, so a key's order survives a failure. A
 * message RocketMQ calls illegal (no body, over the size limit, a reserved property) or a topic this
 * client may not write is poison; a topic the name server does not know is dead once the row is older
 * than {@code missingTopicGrace} (a broker that creates topics on first use never says so); anything
 * else is tried again later. Used by one relay thread at a time.
 */
public final class RocketMqOutboxPublisher implements OutboxPublisher {

    // RocketMQ's response codes (their class moved package between 4.9 and 5): MESSAGE_ILLEGAL,
    // NO_PERMISSION, TOPIC_NOT_EXIST.
    private static final int MESSAGE_ILLEGAL = 13;
    private static final int NO_PERMISSION = 16;
    private static final int TOPIC_NOT_EXIST = 17;
    private static final MessageQueueSelector BY_KEY = (queues, message, key) ->
            queues.get(Math.floorMod(key.hashCode(), queues.size()));

    private final DefaultMQProducer producer;
    private final Duration timeout;
    private final Duration missingTopicGrace;

    private RocketMqOutboxPublisher(DefaultMQProducer producer, Duration timeout, Duration missingTopicGrace) {
        this.producer = producer;
        this.timeout = timeout;
        this.missingTopicGrace = missingTopicGrace;
    }

    /** A builder for a publisher with its own producer (group {@code idem-outbox}) on {@code nameServerAddress}. */
    public static Builder builder(String nameServerAddress) {
        Objects.requireNonNull(nameServerAddress, "nameServerAddress");
        DefaultMQProducer producer = new DefaultMQProducer("idem-outbox");
        producer.setNamesrvAddr(nameServerAddress);
        producer.setInstanceName(InstanceNames.next("idem-outbox"));
        return new Builder(producer);
    }

    /**
     * A builder for a publisher on {@code producer}, configured by the application (ACL hook,
     * namespace, TLS) and not started: the publisher starts it and shuts it down.
     */
    public static Builder builder(DefaultMQProducer producer) {
        return new Builder(Objects.requireNonNull(producer, "producer"));
    }

    @Override
    public List<Result> publish(List<OutboxRecord> records) throws InterruptedException {
        List<Result> results = new ArrayList<>(records.size());
        Map<String, Result> held = new HashMap<>();
        for (OutboxRecord record : records) {
            Result earlier = held.get(record.destination());
            Result result = earlier != null ? earlier : send(record);
            if (result instanceof Retry retry && earlier == null) {
                held.put(record.destination(), new Retry("not sent: an earlier message to " + record.destination()
                        + " failed in this batch (" + retry.reason() + ")"));
            }
            results.add(result);
        }
        return results;
    }

    private Result send(OutboxRecord record) throws InterruptedException {
        Message message;
        try {
            message = messageOf(record);
        } catch (RuntimeException e) {
            return new Poison("not a RocketMQ message: " + e.getMessage());
        }
        try {
            String key = record.key();
            SendResult sent = key == null ? producer.send(message, timeout.toMillis())
                    : producer.send(message, BY_KEY, key, timeout.toMillis());
            return sent.getSendStatus() == SendStatus.SEND_OK ? Published.INSTANCE
                    : new Retry("stored as " + sent.getSendStatus() + ", not SEND_OK");
        } catch (MQClientException e) {
            return e.getResponseCode() == MESSAGE_ILLEGAL ? new Poison(describe(e)) : missingOrRetry(record, e);
        } catch (MQBrokerException e) {
            if (e.getResponseCode() == MESSAGE_ILLEGAL || e.getResponseCode() == NO_PERMISSION) {
                return new Poison(describe(e));
            }
            return e.getResponseCode() == TOPIC_NOT_EXIST ? missing(record) : new Retry(describe(e));
        } catch (RemotingException | RuntimeException e) {
            return new Retry(describe(e));
        }
    }

    /** A send the client refused: a topic the name server does not know, or trouble reaching it. */
    private Result missingOrRetry(OutboxRecord record, MQClientException failure) {
        try {
            producer.fetchPublishMessageQueues(record.destination());
            return new Retry(describe(failure));
        } catch (MQClientException e) {
            return e.getCause() instanceof MQClientException cause && cause.getResponseCode() == TOPIC_NOT_EXIST
                    ? missing(record) : new Retry(describe(failure));
        }
    }

    private Result missing(OutboxRecord record) {
        String reason = "destination topic " + record.destination() + " does not exist";
        return Duration.between(record.createdAt(), Instant.now()).compareTo(missingTopicGrace) < 0
                ? new Retry(reason + " (yet: dead once the row is " + missingTopicGrace.toSeconds() + " s old)")
                : new Poison(reason);
    }

    private static Message messageOf(OutboxRecord record) {
        byte[] value = record.value();
        Message message = new Message(record.destination(), value == null ? new byte[0] : value);
        String key = record.key();
        if (key != null && !key.isBlank()) {
            message.setKeys(key);
        }
        Set<String> seen = new HashSet<>();
        record.headers().forEach((name, text) -> {
            if (MessageConst.STRING_HASH_SET.contains(name)) {
                throw new IllegalArgumentException("header '" + name + "' is a property RocketMQ reserves");
            }
            if (!name.isBlank() && !text.isBlank() && seen.add(name)) {
                message.putUserProperty(name, text);
            }
        });
        message.putUserProperty(OutboxHeaders.MESSAGE_ID, record.id());
        String traceParent = record.traceParent();
        if (traceParent != null) {
            message.putUserProperty(OutboxHeaders.TRACE_PARENT, traceParent);
        }
        return message;
    }

    private static String describe(Throwable failure) {
        return failure.getClass().getSimpleName() + ": " + failure.getMessage();
    }

    @Override
    public void close() {
        producer.shutdown();
    }

    /** Builds a {@link RocketMqOutboxPublisher}. Not thread-safe. */
    public static final class Builder {

        private final DefaultMQProducer producer;
        private Duration timeout = Duration.ofSeconds(3);
        private Duration missingTopicGrace = Duration.ofMinutes(1);

        private Builder(DefaultMQProducer producer) {
            this.producer = producer;
        }

        /** How long one send may take before the row is tried again. Default 3 s (RocketMQ's own). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * How long after a row was written a destination topic the name server does not know is
         * waited for before the row goes to the dead state. Default 1 minute.
         */
        public Builder missingTopicGrace(Duration missingTopicGrace) {
            this.missingTopicGrace = missingTopicGrace;
            return this;
        }

        /**
         * Builds the publisher and starts its producer.
         *
         * @throws IllegalArgumentException naming a setting out of range
         * @throws IllegalStateException    if the producer cannot start
         */
        public RocketMqOutboxPublisher build() {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be > 0 but was " + timeout);
            }
            if (missingTopicGrace == null || missingTopicGrace.isNegative()) {
                throw new IllegalArgumentException("missingTopicGrace must be >= 0 but was " + missingTopicGrace);
            }
            try {
                producer.start();
            } catch (MQClientException e) {
                throw new IllegalStateException("could not start the outbox producer: " + e.getMessage(), e);
            }
            return new RocketMqOutboxPublisher(producer, timeout, missingTopicGrace);
        }
    }
}
