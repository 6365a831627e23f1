package dev.idem.rocketmq;

import dev.idem.core.Batch;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import java.util.List;
import java.util.Objects;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * An orderly RocketMQ listener running each message through Idem. A message to redeliver suspends
 * its queue for the backoff, so the later messages of the queue wait for it; after the last
 * attempt it is dead-lettered and the queue moves on. Messages of the batch that were already
 * applied come back with it and are recognised as duplicates. Thread-safe.
 *
 * @param <T> payload type
 */
public final class IdemOrderlyListener<T> implements MessageListenerOrderly {

    // RocketMQ clamps the suspension to this range.
    private static final long MIN_SUSPEND_MILLIS = 10;
    private static final long MAX_SUSPEND_MILLIS = 30_000;

    private final IdempotentProcessor<T> processor;

    private IdemOrderlyListener(IdempotentProcessor<T> processor) {
        this.processor = Objects.requireNonNull(processor, "processor");
    }

    /** A listener for {@code processor}. */
    public static <T> IdemOrderlyListener<T> of(IdempotentProcessor<T> processor) {
        return new IdemOrderlyListener<>(processor);
    }

    @Override
    public ConsumeOrderlyStatus consumeMessage(List<MessageExt> messages, ConsumeOrderlyContext context) {
        return consume(messages.stream().map(RocketMqEnvelopes::of).toList(), context);
    }

    /** Consumes envelopes made from the listener's messages, in their order. */
    ConsumeOrderlyStatus consume(List<Envelope> envelopes, ConsumeOrderlyContext context) {
        try (Batch<T> batch = processor.open(envelopes)) {
            for (int i = 0; i < batch.size(); i++) {
                Outcome outcome = batch.process(i);
                if (!outcome.disposition().acknowledges()) {
                    long millis = outcome.disposition().delay().toMillis();
                    context.setSuspendCurrentQueueTimeMillis(
                            Math.max(MIN_SUSPEND_MILLIS, Math.min(MAX_SUSPEND_MILLIS, millis)));
                    return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
                }
            }
            return ConsumeOrderlyStatus.SUCCESS;
        }
    }
}
