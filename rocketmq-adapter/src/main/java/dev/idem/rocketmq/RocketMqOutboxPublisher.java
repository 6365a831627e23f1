package dev.idem.rocketmq;

import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRecord;
import dev.idem.rocketmq.internal.InstanceNames;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes outbox rows to RocketMQ, one synchronous send at a time ({@code SEND_OK} only): the row's
 * value as the body, its key as the message keys and the queue selector (a key's messages go to one
 * queue, in the order given), its headers as user properties (blank ones left out: RocketMQ refuses
 * them), {@link OutboxHeaders#MESSAGE_ID} and {@link OutboxHeaders#TRACE_PARENT}; a status other than
 * {@code SEND_OK} (a flush or replica timeout) means the master stored it. A row that failed holds
 * back the later rows of its destination in that batch, so a key's order survives a failure, and the
 * cluster unreachable holds back the rest of the batch. A message RocketMQ calls illegal (no body,
 * over the size limit, a reserved property) is poison; a topic the name server does not know is dead
 * once it has been missing for {@code missingTopicGrace} while other topics were published (a broker
 * that creates topics on first use never calls one missing); anything else is tried again later.
 * Used by one relay thread at a time.
 */
public final class RocketMqOutboxPublisher implements OutboxPublisher {

    // RocketMQ's response codes (their class moved package between 4.9 and 5): MESSAGE_ILLEGAL,
    // NO_PERMISSION, TOPIC_NOT_EXIST.
    private static final int MESSAGE_ILLEGAL = 13;
    private static final int NO_PERMISSION = 16;
    private static final int TOPIC_NOT_EXIST = 17;
    private static final MessageQueueSelector BY_KEY = (queues, message, key) ->
            queues.get(Math.floorMod(key.hashCode(), queues.size()));

    private static final Logger LOG = LoggerFactory.getLogger(RocketMqOutboxPublisher.class);

    private final DefaultMQProducer producer;
    private final Duration timeout;
    private final Duration missingTopicGrace;
    private final Map<String, Instant> missingSince = new ConcurrentHashMap<>();
    private volatile @Nullable Instant lastPublished;

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
        Map<String, Result> heldBack = new HashMap<>();
        Result unreachable = null;
        for (OutboxRecord record : records) {
            Result earlier = unreachable != null ? unreachable : heldBack.get(record.destination());
            if (earlier != null) {
                results.add(earlier);
                continue;
            }
            Sent sent = send(record);
            if (sent.result() instanceof Retry retry) {
                Result held = new Retry("not sent: an earlier message in this batch failed (" + retry.reason() + ")");
                if (sent.topicOnly()) {
                    heldBack.put(record.destination(), held);   // the order of its keys
                } else {
                    unreachable = held;                          // each send would wait its timeout
                }
            }
            results.add(sent.result());
        }
        return results;
    }

    /** A send's result, and whether a failure concerns its topic only (else the cluster). */
    private record Sent(Result result, boolean topicOnly) {
    }

    private Sent send(OutboxRecord record) throws InterruptedException {
        Message message;
        try {
            message = messageOf(record);
        } catch (RuntimeException e) {
            return new Sent(new Poison("not a RocketMQ message: " + e.getMessage()), true);
        }
        try {
            String key = record.key();
            SendResult sent = key == null ? producer.send(message, timeout.toMillis())
                    : producer.send(message, BY_KEY, key, timeout.toMillis());
            // FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE: the master stored it.
            lastPublished = Instant.now();
            missingSince.remove(record.destination());
            if (sent.getSendStatus() != SendStatus.SEND_OK) {
                LOG.debug("outbox row {} stored as {}", record.id(), sent.getSendStatus());
            }
            return new Sent(Published.INSTANCE, true);
        } catch (MQClientException e) {
            return e.getResponseCode() == MESSAGE_ILLEGAL ? new Sent(new Poison(describe(e)), true)
                    : missingOrRetry(record, e);
        } catch (MQBrokerException e) {
            if (e.getResponseCode() == MESSAGE_ILLEGAL) {
                return new Sent(new Poison(describe(e)), true);
            }
            if (e.getResponseCode() == TOPIC_NOT_EXIST) {
                return new Sent(missing(record), true);
            }
            // NO_PERMISSION too: a broker's write permission is taken away for maintenance.
            return new Sent(new Retry(describe(e)), e.getResponseCode() == NO_PERMISSION);
        } catch (RemotingException | RuntimeException e) {
            return new Sent(new Retry(describe(e)), false);
        }
    }

    /** A send the client refused: a topic the name server does not know, or trouble reaching it. */
    private Sent missingOrRetry(OutboxRecord record, MQClientException failure) {
        try {
            producer.fetchPublishMessageQueues(record.destination());
            return new Sent(new Retry(describe(failure)), false);
        } catch (MQClientException e) {
            return e.getCause() instanceof MQClientException cause && cause.getResponseCode() == TOPIC_NOT_EXIST
                    ? new Sent(missing(record), true) : new Sent(new Retry(describe(failure)), false);
        }
    }

    /**
     * A topic the name server does not know: dead once it has been missing for the grace while
     * messages to other topics were published (a name server whose brokers are all down knows no
     * topic either: that is an outage, not a missing topic).
     */
    private Result missing(OutboxRecord record) {
        Instant now = Instant.now();
        Instant since = missingSince.computeIfAbsent(record.destination(), topic -> now);
        String reason = "destination topic " + record.destination() + " does not exist";
        Instant published = lastPublished;
        boolean brokersUp = published != null && published.isAfter(since);
        return brokersUp && Duration.between(since, now).compareTo(missingTopicGrace) >= 0 ? new Poison(reason)
                : new Retry(reason + " (yet: dead once missing for " + missingTopicGrace.toSeconds()
                + " s while other topics are published)");
    }

    private static Message messageOf(OutboxRecord record) {
        byte[] value = record.value();
        Message message = new Message(record.destination(), value == null ? new byte[0] : value);
        String key = record.key();
        if (key != null && !key.isBlank()) {
            message.setKeys(key);
        }
        record.headers().forEach((name, text) -> {
            if (MessageConst.STRING_HASH_SET.contains(name)) {
                throw new IllegalArgumentException("header '" + name + "' is a property RocketMQ reserves");
            }
            if (!name.isBlank() && !text.isBlank()) {
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
         * How long a destination topic the name server does not know is waited for (a deploy may be
         * creating it), while messages to other topics are published, before its rows go to the dead
         * state. Default 1 minute.
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
