package dev.idem.rocketmq;

import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.rocketmq.internal.ListenerGate;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import dev.idem.rocketmq.internal.StallingRun;
import java.time.Duration;
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
 * applied come back with it and are recognised as duplicates. While the claim store (or another
 * piece of infrastructure) is unavailable the call stalls with backoff before suspending, for at
 * most {@code maxStall}: each suspension raises the message's {@code reconsumeTimes} (decision 0012).
 * Thread-safe.
 *
 * @param <T> payload type
 */
public final class IdemOrderlyListener<T> implements MessageListenerOrderly {

    // RocketMQ clamps the suspension to this range.
    private static final long MIN_SUSPEND_MILLIS = 10;
    private static final long MAX_SUSPEND_MILLIS = 30_000;
    // A refused call (the consumer is closing) waits this long at most for the queues to be dropped.
    private static final Duration REFUSED_HOLD = Duration.ofSeconds(30);

    private final StallingRun.Opener opener;
    private final ListenerGate gate;
    private final Duration maxStall;

    private IdemOrderlyListener(IdempotentProcessor<T> processor, ListenerGate gate, Duration maxStall) {
        this.opener = StallingRun.Opener.alone(Objects.requireNonNull(processor, "processor"));
        this.gate = gate;
        if (maxStall == null || maxStall.isNegative()) {
            throw new IllegalArgumentException("maxStall must be >= 0 but was " + maxStall);
        }
        this.maxStall = maxStall;
    }

    /** A listener for {@code processor}, stalling on deferrals for at most 5 minutes. */
    public static <T> IdemOrderlyListener<T> of(IdempotentProcessor<T> processor) {
        return of(processor, IdemConcurrentlyListener.DEFAULT_MAX_STALL);
    }

    /**
     * A listener stalling on deferrals for at most {@code maxStall}.
     *
     * @throws IllegalArgumentException if maxStall is negative
     */
    public static <T> IdemOrderlyListener<T> of(IdempotentProcessor<T> processor, Duration maxStall) {
        return new IdemOrderlyListener<>(processor, new ListenerGate(), maxStall);
    }

    static <T> IdemOrderlyListener<T> of(IdempotentProcessor<T> processor, ListenerGate gate, Duration maxStall) {
        return new IdemOrderlyListener<>(processor, gate, maxStall);
    }

    @Override
    public ConsumeOrderlyStatus consumeMessage(List<MessageExt> messages, ConsumeOrderlyContext context) {
        return consume(messages.stream().map(RocketMqEnvelopes::of).toList(), context);
    }

    /** Consumes envelopes made from the listener's messages, in their order. */
    ConsumeOrderlyStatus consume(List<Envelope> envelopes, ConsumeOrderlyContext context) {
        if (!gate.enter()) {
            // Closing: process nothing; the queue is about to be dropped and the answer ignored.
            gate.holdRefused(REFUSED_HOLD);
            return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
        }
        try {
            StallingRun.Result result = StallingRun.run(opener, envelopes, gate, maxStall);
            if (result.stopped() == null) {
                return ConsumeOrderlyStatus.SUCCESS;
            }
            long millis = result.stopped().disposition().delay().toMillis();
            context.setSuspendCurrentQueueTimeMillis(Math.max(MIN_SUSPEND_MILLIS, Math.min(MAX_SUSPEND_MILLIS, millis)));
            return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
        } finally {
            gate.exit();
        }
    }
}
