package dev.idem.rocketmq;

import dev.idem.core.DeliveryHandler;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.PayloadCodec;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * One line to put Idem in front of a listener you already have:
 *
 * <pre>{@code
 * Idem idem = IdemRocketMq.wrap(consumer, existingListener,
 *         settings -> settings.claims(claims).dedupCheck(ledger).keys(KeySource.messageKey()));
 * consumer.start();
 * }</pre>
 *
 * Your listener then sees one message per call, only when Idem has claimed it and the business
 * check found no earlier effect; returning "reconsume later" or throwing counts as a failure. The
 * consumer's group names the keys; dead letters go to {@code <topic>_DLQ}.
 */
public final class IdemRocketMq {

    // The consumer's default maxReconsumeTimes (-1) means 16 for concurrent listeners.
    private static final int DEFAULT_CONCURRENT_RECONSUME_TIMES = 16;

    private IdemRocketMq() {
    }

    /** What {@code wrap} set up; closing it stops the dead-letter producer and lease renewal. */
    public static final class Idem implements AutoCloseable {
        private final IdempotentProcessor<byte[]> processor;
        private final RocketMqDeadLetterPublisher deadLetters;

        private Idem(IdempotentProcessor<byte[]> processor, RocketMqDeadLetterPublisher deadLetters) {
            this.processor = processor;
            this.deadLetters = deadLetters;
        }

        /** The processor in front of the listener. */
        public IdempotentProcessor<byte[]> processor() {
            return processor;
        }

        @Override
        public void close() {
            processor.close();
            deadLetters.close();
        }
    }

    /**
     * Registers {@code listener}, behind Idem, on a consumer that is not started yet.
     *
     * @param settings sets at least the claim store, the dedup check and the key source
     * @throws IllegalArgumentException if the consumer's maxReconsumeTimes does not exceed Idem's
     *                                  maxAttempts, or a setting is missing
     */
    public static Idem wrap(DefaultMQPushConsumer consumer, MessageListenerConcurrently listener,
                            Consumer<IdempotentProcessor.Builder<byte[]>> settings) {
        Objects.requireNonNull(listener, "listener");
        ThreadLocal<Map<Envelope, MessageExt>> messages = ThreadLocal.withInitial(IdentityHashMap::new);
        Idem idem = build(consumer, false, settings, delivery -> {
            MessageExt message = messages.get().get(delivery.envelope());
            ConsumeConcurrentlyStatus status = listener.consumeMessage(List.of(message),
                    new ConsumeConcurrentlyContext(queueOf(message)));
            if (status != ConsumeConcurrentlyStatus.CONSUME_SUCCESS) {
                throw new IllegalStateException("listener returned " + status);
            }
        });
        IdemConcurrentlyListener<byte[]> inner = IdemConcurrentlyListener.of(idem.processor(), DelayLevels.defaults());
        consumer.registerMessageListener((MessageListenerConcurrently) (batch, context) ->
                withMessages(messages, batch, envelopes -> inner.consume(envelopes, context)));
        return idem;
    }

    /**
     * Registers an orderly {@code listener}, behind Idem, on a consumer that is not started yet.
     *
     * @throws IllegalArgumentException as {@link #wrap(DefaultMQPushConsumer, MessageListenerConcurrently, Consumer)}
     */
    public static Idem wrap(DefaultMQPushConsumer consumer, MessageListenerOrderly listener,
                            Consumer<IdempotentProcessor.Builder<byte[]>> settings) {
        Objects.requireNonNull(listener, "listener");
        ThreadLocal<Map<Envelope, MessageExt>> messages = ThreadLocal.withInitial(IdentityHashMap::new);
        Idem idem = build(consumer, true, settings, delivery -> {
            MessageExt message = messages.get().get(delivery.envelope());
            ConsumeOrderlyStatus status = listener.consumeMessage(List.of(message),
                    new ConsumeOrderlyContext(queueOf(message)));
            if (status != ConsumeOrderlyStatus.SUCCESS && status != ConsumeOrderlyStatus.COMMIT) {
                throw new IllegalStateException("listener returned " + status);
            }
        });
        IdemOrderlyListener<byte[]> inner = IdemOrderlyListener.of(idem.processor());
        consumer.registerMessageListener((MessageListenerOrderly) (batch, context) ->
                withMessages(messages, batch, envelopes -> inner.consume(envelopes, context)));
        return idem;
    }

    private static MessageQueue queueOf(MessageExt message) {
        return new MessageQueue(message.getTopic(), message.getBrokerName(), message.getQueueId());
    }

    private static <R> R withMessages(ThreadLocal<Map<Envelope, MessageExt>> messages, List<MessageExt> batch,
                                      Function<List<Envelope>, R> consume) {
        // The processor hands the handler these very envelope instances; the map leads back to the
        // message. RocketMQ calls a listener on one thread per batch, so a thread-local map suffices.
        Map<Envelope, MessageExt> byEnvelope = messages.get();
        byEnvelope.clear();
        List<Envelope> envelopes = new ArrayList<>(batch.size());
        for (MessageExt message : batch) {
            Envelope envelope = RocketMqEnvelopes.of(message);
            byEnvelope.put(envelope, message);
            envelopes.add(envelope);
        }
        try {
            return consume.apply(envelopes);
        } finally {
            byEnvelope.clear();
        }
    }

    private static Idem build(DefaultMQPushConsumer consumer, boolean orderly,
                              Consumer<IdempotentProcessor.Builder<byte[]>> settings, DeliveryHandler<byte[]> handler) {
        Objects.requireNonNull(consumer, "consumer");
        IdempotentProcessor.Builder<byte[]> builder = IdempotentProcessor.builder(handler)
                .codec(PayloadCodec.bytes()).group(consumer.getConsumerGroup());
        settings.accept(builder);
        checkReconsumeTimes(consumer, orderly, builder.maxAttempts());
        RocketMqDeadLetterPublisher deadLetters = RocketMqDeadLetterPublisher.start(consumer.getNamesrvAddr(),
                consumer.getConsumerGroup(), DeadLetterRouting.suffix("_DLQ"));
        try {
            return new Idem(builder.deadLetters(deadLetters).build(), deadLetters);
        } catch (RuntimeException e) {
            deadLetters.close();
            throw e;
        }
    }

    /**
     * Idem, not the broker, must decide when a message is dead: the consumer must allow more
     * redeliveries than Idem's attempts.
     *
     * @throws IllegalArgumentException naming the setting when it does not
     */
    static void checkReconsumeTimes(DefaultMQPushConsumer consumer, boolean orderly, int maxAttempts) {
        int configured = consumer.getMaxReconsumeTimes();
        long effective = configured >= 0 ? configured : orderly ? Integer.MAX_VALUE : DEFAULT_CONCURRENT_RECONSUME_TIMES;
        if (effective <= maxAttempts) {
            throw new IllegalArgumentException("maxReconsumeTimes of consumer group " + consumer.getConsumerGroup()
                    + " must exceed Idem's maxAttempts (" + maxAttempts + ") but was " + configured
                    + ": otherwise RocketMQ dead-letters messages before Idem has tried them");
        }
    }
}
