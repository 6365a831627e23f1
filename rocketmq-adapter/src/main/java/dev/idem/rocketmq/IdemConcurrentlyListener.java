package dev.idem.rocketmq;

import dev.idem.core.Batch;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import java.util.List;
import java.util.Objects;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * A concurrent RocketMQ listener running each message through Idem. A batch is claimed in one
 * round trip and processed in order; at the first message to redeliver, the listener returns
 * success with a precise {@code ackIndex}, so only that message and the ones after it come back,
 * after the delay level matching the backoff. Thread-safe.
 *
 * @param <T> payload type
 */
public final class IdemConcurrentlyListener<T> implements MessageListenerConcurrently {

    private final IdempotentProcessor<T> processor;
    private final DelayLevels delayLevels;

    private IdemConcurrentlyListener(IdempotentProcessor<T> processor, DelayLevels delayLevels) {
        this.processor = Objects.requireNonNull(processor, "processor");
        this.delayLevels = Objects.requireNonNull(delayLevels, "delayLevels");
    }

    /** A listener for {@code processor}, mapping backoffs onto {@code delayLevels}. */
    public static <T> IdemConcurrentlyListener<T> of(IdempotentProcessor<T> processor, DelayLevels delayLevels) {
        return new IdemConcurrentlyListener<>(processor, delayLevels);
    }

    @Override
    public ConsumeConcurrentlyStatus consumeMessage(List<MessageExt> messages, ConsumeConcurrentlyContext context) {
        return consume(messages.stream().map(RocketMqEnvelopes::of).toList(), context);
    }

    /** Consumes envelopes made from the listener's messages, in their order. */
    ConsumeConcurrentlyStatus consume(List<Envelope> envelopes, ConsumeConcurrentlyContext context) {
        try (Batch<T> batch = processor.open(envelopes)) {
            for (int i = 0; i < batch.size(); i++) {
                Outcome outcome = batch.process(i);
                if (!outcome.disposition().acknowledges()) {
                    // CONSUME_SUCCESS with ackIndex i-1: messages 0..i-1 are done, i.. are sent back.
                    // (RECONSUME_LATER would resend the whole batch.)
                    context.setAckIndex(i - 1);
                    context.setDelayLevelWhenNextConsume(delayLevels.levelFor(outcome.disposition().delay()));
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                }
            }
            context.setAckIndex(envelopes.size() - 1);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }
    }
}
