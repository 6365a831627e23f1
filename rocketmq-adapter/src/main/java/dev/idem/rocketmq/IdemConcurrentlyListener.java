package dev.idem.rocketmq;

import dev.idem.core.Disposition;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.rocketmq.internal.ClaimGroups;
import dev.idem.rocketmq.internal.ListenerGate;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import dev.idem.rocketmq.internal.StallingRun;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * A concurrent RocketMQ listener running each message through Idem. A call's messages are claimed
 * in one round trip, together with those of the calls that arrived while another claim was on its
 * way (decision 0048), and processed in order; at the first message to redeliver, the listener returns
 * success with a precise {@code ackIndex}, so only that message and the ones after it come back,
 * after the delay level matching the backoff. While the claim store (or another piece of
 * infrastructure) is unavailable the call stalls with backoff instead of answering, for at most
 * {@code maxStall}, so an outage does not spend the broker's redelivery count (decision 0012).
 * Thread-safe.
 *
 * @param <T> payload type
 */
public final class IdemConcurrentlyListener<T> implements MessageListenerConcurrently {

    /** A third of the client's default {@code consumeTimeout} (15 min), after which it takes messages back. */
    public static final Duration DEFAULT_MAX_STALL = Duration.ofMinutes(5);
    // A refused call (the consumer is closing) waits this long at most for the queues to be dropped.
    private static final Duration REFUSED_HOLD = Duration.ofSeconds(30);

    private final ClaimGroups<T> groups;
    private final DelayLevels delayLevels;
    private final ListenerGate gate;
    private final Duration maxStall;

    private IdemConcurrentlyListener(IdempotentProcessor<T> processor, DelayLevels delayLevels, ListenerGate gate,
                                     Duration maxStall) {
        this.groups = new ClaimGroups<>(Objects.requireNonNull(processor, "processor"));
        this.delayLevels = Objects.requireNonNull(delayLevels, "delayLevels");
        this.gate = gate;
        if (maxStall == null || maxStall.isNegative()) {
            throw new IllegalArgumentException("maxStall must be >= 0 but was " + maxStall);
        }
        this.maxStall = maxStall;
    }

    /** A listener for {@code processor}, mapping backoffs onto {@code delayLevels}, stalling up to 5 minutes. */
    public static <T> IdemConcurrentlyListener<T> of(IdempotentProcessor<T> processor, DelayLevels delayLevels) {
        return of(processor, delayLevels, DEFAULT_MAX_STALL);
    }

    /**
     * A listener stalling on deferrals for at most {@code maxStall}: keep it well below the consumer's
     * {@code consumeTimeout}, after which the client sends a message back by itself.
     *
     * @throws IllegalArgumentException if maxStall is negative
     */
    public static <T> IdemConcurrentlyListener<T> of(IdempotentProcessor<T> processor, DelayLevels delayLevels,
                                                     Duration maxStall) {
        return new IdemConcurrentlyListener<>(processor, delayLevels, new ListenerGate(), maxStall);
    }

    static <T> IdemConcurrentlyListener<T> of(IdempotentProcessor<T> processor, DelayLevels delayLevels,
                                              ListenerGate gate, Duration maxStall) {
        return new IdemConcurrentlyListener<>(processor, delayLevels, gate, maxStall);
    }

    @Override
    public ConsumeConcurrentlyStatus consumeMessage(List<MessageExt> messages, ConsumeConcurrentlyContext context) {
        return consume(messages.stream().map(RocketMqEnvelopes::of).toList(), context);
    }

    /** Consumes envelopes made from the listener's messages, in their order. */
    ConsumeConcurrentlyStatus consume(List<Envelope> envelopes, ConsumeConcurrentlyContext context) {
        if (!gate.enter()) {
            // Closing: process nothing. The queues are about to be dropped, and the client ignores the
            // answer of a dropped queue, so the messages stay unacknowledged without being sent back.
            gate.holdRefused(REFUSED_HOLD);
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        }
        try {
            StallingRun.Result result = StallingRun.run(groups, envelopes, gate, maxStall);
            // CONSUME_SUCCESS with ackIndex: messages up to it are done, the later ones are sent back.
            // (RECONSUME_LATER would resend the whole batch.)
            context.setAckIndex(result.acknowledged() - 1);
            if (result.stopped() != null) {
                Disposition disposition = result.stopped().disposition();
                // A run that failed backs off on its attempt; a message that comes back with no run
                // counted (Busy, Deferred) climbs the levels on its redeliveries instead. The level is
                // the batch's: the least redelivered message sent back sets it, so none that never ran
                // waits on another's count.
                int level = disposition.uncounted()
                        ? delayLevels.levelFor(disposition.delay(), fewestSendBacks(envelopes, result.acknowledged()))
                        : delayLevels.levelFor(disposition.delay());
                context.setDelayLevelWhenNextConsume(level);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        } finally {
            gate.exit();
        }
    }

    private static int fewestSendBacks(List<Envelope> envelopes, int from) {
        int fewest = Integer.MAX_VALUE;
        for (int i = from; i < envelopes.size(); i++) {
            fewest = Math.min(fewest, envelopes.get(i).brokerAttempt() - 1);
        }
        return fewest;
    }
}
