package dev.idem.rocketmq;

import java.time.Duration;
import java.util.OptionalInt;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

/**
 * What a push consumer must look like for Idem to be in charge of it, in one place for Idem's entry
 * points and for integrations that put Idem on a consumer a framework made (rocketmq-spring's
 * container): clustering, enough redeliveries for Idem's attempts, and how long a call may stall.
 * Thread-safe (no state).
 */
public final class PushConsumerRules {

    /**
     * Redeliveries Idem needs beyond its attempts: Busy and Deferred redeliveries raise the broker's
     * {@code reconsumeTimes} too. Busy ones wait for the holder's lease and deferred ones stall in the
     * listener first (decision 0012), so 32 covers a crashed owner and hours of a Redis outage.
     */
    public static final int RECONSUME_HEADROOM = 32;

    // The client's maxReconsumeTimes of -1 means 16 for concurrent listeners (orderly: unbounded).
    private static final int DEFAULT_CONCURRENT_RECONSUME_TIMES = 16;

    private PushConsumerRules() {
    }

    /**
     * Broadcasting consumers are refused: the client drops every message after {@code ackIndex}
     * ("BROADCASTING, the message consume failed, drop it"), so a redelivery would be a loss.
     *
     * @throws IllegalArgumentException naming the setting
     */
    public static void requireClustering(DefaultMQPushConsumer consumer) {
        String model = messageModel(consumer);
        if (!"CLUSTERING".equals(model)) {
            throw new IllegalArgumentException("messageModel of consumer group " + consumer.getConsumerGroup()
                    + " must be CLUSTERING but was " + model + ": a broadcasting consumer drops the messages Idem"
                    + " asks to redeliver; use one consumer group per instance instead");
        }
    }

    // getMessageModel() returns an enum that moved package between the 4.9 and 5.x clients, so a direct
    // call compiled against one fails with NoSuchMethodError on the other; by name, one jar serves both.
    private static String messageModel(DefaultMQPushConsumer consumer) {
        try {
            return String.valueOf(consumer.getClass().getMethod("getMessageModel").invoke(consumer));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the messageModel of consumer group "
                    + consumer.getConsumerGroup(), e);
        }
    }

    /**
     * Idem, not the broker, must decide when a message is dead.
     *
     * @throws IllegalArgumentException naming the setting to raise when the consumer allows fewer than
     *                                  {@code maxAttempts + }{@link #RECONSUME_HEADROOM} redeliveries
     */
    public static void requireReconsumeHeadroom(DefaultMQPushConsumer consumer, boolean orderly, int maxAttempts) {
        int configured = consumer.getMaxReconsumeTimes();
        long effective = configured >= 0 ? configured : orderly ? Integer.MAX_VALUE : DEFAULT_CONCURRENT_RECONSUME_TIMES;
        long needed = (long) maxAttempts + RECONSUME_HEADROOM;
        if (effective < needed) {
            throw new IllegalArgumentException("maxReconsumeTimes of consumer group " + consumer.getConsumerGroup()
                    + " must be >= maxAttempts + " + RECONSUME_HEADROOM + " = " + needed + " but was " + configured
                    + (configured < 0 ? " (the client's default, " + effective + ")" : "")
                    + ": busy and deferred redeliveries raise reconsumeTimes too, and at the limit RocketMQ"
                    + " dead-letters into %DLQ%" + consumer.getConsumerGroup() + " behind Idem's back;"
                    + " call consumer.setMaxReconsumeTimes(" + needed + ") or more");
        }
    }

    /**
     * Raises the consumer's {@code maxReconsumeTimes} to what Idem's attempts need, where it is lower:
     * Idem, not the broker, decides the dead letter.
     *
     * @return the value set, or empty when the consumer already allowed enough
     */
    public static OptionalInt raiseReconsumeTimes(DefaultMQPushConsumer consumer, boolean orderly, int maxAttempts) {
        int needed = (int) Math.min(Integer.MAX_VALUE, (long) maxAttempts + RECONSUME_HEADROOM);
        // -1 is the client's default: 16 for concurrent consumers, unbounded for orderly ones.
        int configured = consumer.getMaxReconsumeTimes();
        if (orderly ? configured >= 0 && configured < needed : configured < needed) {
            consumer.setMaxReconsumeTimes(needed);
            return OptionalInt.of(needed);
        }
        return OptionalInt.empty();
    }

    /**
     * How long a listener call may stall on deferrals: a third of the client's {@code consumeTimeout},
     * after which a concurrent consumer takes the message back itself (and counts a redelivery).
     */
    public static Duration maxStall(DefaultMQPushConsumer consumer) {
        return Duration.ofMinutes(Math.max(1, consumer.getConsumeTimeout())).dividedBy(3);
    }
}
