package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Batch;
import dev.idem.core.DedupCheck;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.rocketmq.internal.RocketMqEnvelopes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/**
 * A copy whose key another consumer holds for a long time (a long handler on the old owner after a
 * rebalance) is sent back Busy again and again, and every send-back raises its reconsumeTimes: the
 * delays must climb RocketMQ's levels, so Idem's spare redeliveries last longer than such a handler,
 * instead of a lease each (37 × 30 s: %DLQ% after 18 minutes).
 */
class BusySendBacksTest {

    private final InMemoryClaimStore store = InMemoryClaimStore.create();

    private IdempotentProcessor<byte[]> processor() {
        return IdempotentProcessor.<byte[]>builder(delivery -> { }).group("g").claims(store)
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> { }).lease(Duration.ofSeconds(30)).build();
    }

    private static MessageExt copy(int reconsumeTimes) {
        MessageExt message = new MessageExt();
        message.setTopic("orders");
        message.setQueueId(0);
        message.setQueueOffset(7);
        message.setMsgId("msg-7");
        message.setKeys("order-7");
        message.setBody("{}".getBytes(StandardCharsets.UTF_8));
        message.setReconsumeTimes(reconsumeTimes);
        return message;
    }

    @Test
    void aCopySentBackBusyAgainAndAgainOutlastsALongHandlerBeforeTheBrokersDeadLetterQueue() {
        DelayLevels levels = DelayLevels.defaults();
        try (IdempotentProcessor<byte[]> holder = processor(); IdempotentProcessor<byte[]> copies = processor();
             Batch<byte[]> running = holder.open(List.<Envelope>of(RocketMqEnvelopes.of(copy(0))))) {
            // Given the old owner running the key's long handler (its claim held)
            assertThat(running).isNotNull();
            IdemConcurrentlyListener<byte[]> listener = IdemConcurrentlyListener.of(copies, levels);

            // When its copy comes back Busy at every redelivery Idem allows beyond its attempts
            Duration waited = Duration.ZERO;
            int sendBacks = 5 + PushConsumerRules.RECONSUME_HEADROOM;
            for (int times = 0; times < sendBacks; times++) {
                ConsumeConcurrentlyContext context = new ConsumeConcurrentlyContext(new MessageQueue("orders", "b", 0));
                listener.consumeMessage(List.of(copy(times)), context);
                assertThat(context.getAckIndex()).as("not acknowledged").isEqualTo(-1);
                waited = waited.plus(levels.delayOf(context.getDelayLevelWhenNextConsume()));
            }

            // Then those send-backs span more than a day, not minutes
            assertThat(waited).isGreaterThan(Duration.ofDays(1));
        }
    }
}
