package dev.idem.rocketmq;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.ProcessorComposer;
import dev.idem.core.PayloadCodec;
import dev.idem.rocketmq.internal.ListenerGate;
import dev.idem.rocketmq.internal.OrderedShutdown;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
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
 * consumer.setMaxReconsumeTimes(37); // at least Idem's maxAttempts (5) + 32
 * IdemRocketMq.Idem idem = IdemRocketMq.wrapConcurrently(consumer, existingListener,
 *         processor -> processor.claims(claims).dedupCheck(ordersTable).keys(KeySource.messageKey()));
 * consumer.start();
 * ...
 * idem.close(); // shuts the consumer down in order, then Idem
 * }</pre>
 *
 * Your listener then sees one message per call, only when Idem has claimed it and the business
 * check found no earlier effect; returning "reconsume later" or throwing counts as a failure. The
 * consumer's group names the keys (a different group set on the processor is refused); dead
 * letters go to {@code <topic>_DLQ} through a producer configured like the consumer, unless the
 * processor has a dead-letter publisher of its own (to decorate it, set your own, e.g. a wrapped
 * {@link RocketMqDeadLetterPublisher#start(DefaultMQPushConsumer, dev.idem.core.DeadLetterRouting)} that you
 * close after the {@link Idem}). The dedup check must read what your listener
 * writes: a {@code JdbcEffectLedger} is refused, because a wrapped listener never runs in its
 * transaction (use {@link IdemRocketMqConsumer} with {@code ledger.processor(...)} for that).
 */
public final class IdemRocketMq {

    // Running listener calls get this long to finish when Idem is closed: the default claim lease,
    // past which another consumer may take the message over anyway.
    private static final Duration CLOSE_GRACE = Duration.ofSeconds(30);

    private IdemRocketMq() {
    }

    /**
     * What a wrap set up. Closing it shuts the wrapped consumer down in order (stop taking work, let
     * running listener calls finish for up to 30 s, shut the client down), then stops lease renewal
     * and the dead-letter producer. Thread-safe.
     */
    public static final class Idem implements AutoCloseable {
        private final DefaultMQPushConsumer consumer;
        private final ListenerGate gate;
        private final ProcessorComposer.Composed<byte[]> composed;
        private boolean closed;

        private Idem(DefaultMQPushConsumer consumer, ListenerGate gate, ProcessorComposer.Composed<byte[]> composed) {
            this.consumer = consumer;
            this.gate = gate;
            this.composed = composed;
        }

        /** The processor in front of the listener. */
        public IdempotentProcessor<byte[]> processor() {
            return composed.processor();
        }

        /** Shuts the consumer down in order, then the processor and Idem's dead-letter producer. */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            OrderedShutdown.stop(consumer, gate, CLOSE_GRACE);
            composed.close();
        }
    }

    /**
     * Registers a concurrent {@code listener}, behind Idem, on a consumer that is not started yet.
     *
     * @param processor sets at least the claim store, the dedup check and the key source; group and
     *                  dead-letter publisher are the consumer's when unset
     * @throws IllegalArgumentException if the consumer broadcasts, its maxReconsumeTimes is below
     *                                  Idem's maxAttempts + 32, the processor's group differs from the
     *                                  consumer's, the dedup check is a JDBC ledger, or a setting is missing
     */
    public static Idem wrapConcurrently(DefaultMQPushConsumer consumer, MessageListenerConcurrently listener,
                                        Consumer<IdempotentProcessor.Builder<byte[]>> processor) {
        Objects.requireNonNull(listener, "listener");
        ListenerGate gate = new ListenerGate();
        Idem idem = build(consumer, false, processor, gate, delivery -> {
            MessageExt message = source(delivery.envelope());
            ConsumeConcurrentlyStatus status = listener.consumeMessage(List.of(message),
                    new ConsumeConcurrentlyContext(queueOf(message)));
            if (status != ConsumeConcurrentlyStatus.CONSUME_SUCCESS) {
                throw new IllegalStateException("listener returned " + status);
            }
        });
        consumer.registerMessageListener(IdemConcurrentlyListener.of(idem.processor(), DelayLevels.defaults(), gate,
                PushConsumerRules.maxStall(consumer)));
        return idem;
    }

    /**
     * Registers an orderly {@code listener}, behind Idem, on a consumer that is not started yet.
     *
     * @throws IllegalArgumentException as {@link #wrapConcurrently}
     */
    public static Idem wrapOrderly(DefaultMQPushConsumer consumer, MessageListenerOrderly listener,
                                   Consumer<IdempotentProcessor.Builder<byte[]>> processor) {
        Objects.requireNonNull(listener, "listener");
        ListenerGate gate = new ListenerGate();
        Idem idem = build(consumer, true, processor, gate, delivery -> {
            MessageExt message = source(delivery.envelope());
            ConsumeOrderlyStatus status = listener.consumeMessage(List.of(message),
                    new ConsumeOrderlyContext(queueOf(message)));
            if (status != ConsumeOrderlyStatus.SUCCESS && status != ConsumeOrderlyStatus.COMMIT) {
                throw new IllegalStateException("listener returned " + status);
            }
        });
        consumer.registerMessageListener(IdemOrderlyListener.of(idem.processor(), gate, PushConsumerRules.maxStall(consumer)));
        return idem;
    }

    private static MessageExt source(Envelope envelope) {
        return envelope.source(MessageExt.class).orElseThrow(() -> new IllegalStateException(
                "envelope of " + envelope.messageId() + " carries no RocketMQ message"));
    }

    private static MessageQueue queueOf(MessageExt message) {
        return new MessageQueue(message.getTopic(), message.getBrokerName(), message.getQueueId());
    }

    private static Idem build(DefaultMQPushConsumer consumer, boolean orderly,
                              Consumer<IdempotentProcessor.Builder<byte[]>> settings, ListenerGate gate,
                              DeliveryHandler<byte[]> handler) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(settings, "processor");
        IdempotentProcessor.Builder<byte[]> builder = IdempotentProcessor.builder(handler).codec(PayloadCodec.bytes());
        settings.accept(builder);
        PushConsumerRules.requireClustering(consumer);
        ProcessorComposer.Composed<byte[]> composed = ProcessorComposer.forConsumer("group", consumer.getConsumerGroup())
                .ownPublisher(() -> RocketMqDeadLetterPublisher.start(consumer, DeadLetterRouting.ROCKETMQ_DEFAULT))
                .handlerOutsideTransaction()
                .limits(limits -> PushConsumerRules.requireReconsumeHeadroom(consumer, orderly, limits.maxAttempts()))
                .compose(builder);
        return new Idem(consumer, gate, composed);
    }
}
