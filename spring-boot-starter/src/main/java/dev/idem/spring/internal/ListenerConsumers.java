package dev.idem.spring.internal;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.share.IdemKafkaShareConsumer;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import dev.idem.spring.IdemProperties;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a listener's consumer on its broker from its plan; each broker's classes are touched only
 * when a listener uses that broker, so an application needs only the adapters it uses.
 */
public final class ListenerConsumers {

    private static final Logger LOG = LoggerFactory.getLogger(ListenerConsumers.class);

    private ListenerConsumers() {
    }

    /** An {@link IdemKafkaConsumer} for the listener, not started. */
    public static IdemConsumer kafka(ListenerPlan plan, IdempotentProcessor.Builder<Object> processor,
                                     Map<String, Object> kafka) {
        IdemProperties.Listener s = plan.settings();
        IdemKafkaConsumer.Builder<Object> builder = IdemKafkaConsumer.builder(withGroup(kafka, plan), processor)
                .topics(plan.topic()).concurrency(plan.concurrency() > 0 ? plan.concurrency() : 1)
                .closeTimeout(s.getCloseTimeout())
                .onFailure(failure -> LOG.warn("Idem listener '{}' trouble", plan.name(), failure));
        if (s.getJoinTimeout() != null) {
            builder.joinTimeout(s.getJoinTimeout());
        }
        if (!plan.deadLetterTopic().isBlank()) {
            builder.deadLetterRouting(DeadLetterRouting.fixed(plan.deadLetterTopic()));
        }
        return builder.build();
    }

    /** An {@link IdemKafkaShareConsumer} for the listener, not started. */
    public static IdemConsumer kafkaShare(ListenerPlan plan, IdempotentProcessor.Builder<Object> processor,
                                          Map<String, Object> kafka) {
        IdemProperties.Listener s = plan.settings();
        IdemKafkaShareConsumer.Builder<Object> builder = IdemKafkaShareConsumer.builder(withGroup(kafka, plan), processor)
                .topics(plan.topic()).concurrency(plan.concurrency() > 0 ? plan.concurrency() : 1)
                .closeTimeout(s.getCloseTimeout())
                .onFailure(failure -> LOG.warn("Idem listener '{}' trouble", plan.name(), failure));
        if (s.getDeliveryLimitRefresh() != null) {
            builder.deliveryLimitRefresh(s.getDeliveryLimitRefresh());
        }
        if (!plan.deadLetterTopic().isBlank()) {
            builder.deadLetterRouting(DeadLetterRouting.fixed(plan.deadLetterTopic()));
        }
        return builder.build();
    }

    /** An {@link IdemRocketMqConsumer} for the listener, not started. */
    public static IdemConsumer rocketMq(ListenerPlan plan, IdempotentProcessor.Builder<Object> processor,
                                        String nameServer) {
        IdemProperties.Listener s = plan.settings();
        IdemRocketMqConsumer.Builder<Object> builder = IdemRocketMqConsumer.builder(nameServer, plan.group(), processor)
                .subscribe(plan.topic(), "*").closeTimeout(s.getCloseTimeout());
        if (plan.concurrency() > 0) {
            builder.concurrency(plan.concurrency());
        }
        if (s.getBatchSize() != null) {
            builder.batchSize(s.getBatchSize());
        }
        if (s.getOrderly() != null) {
            builder.orderly(s.getOrderly());
        }
        if (s.getConsumeFrom() != null) {
            builder.consumeFrom(s.getConsumeFrom() == IdemProperties.Listener.ConsumeFrom.FIRST_OFFSET
                    ? ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET : ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        }
        if (!plan.deadLetterTopic().isBlank()) {
            builder.deadLetterRouting(DeadLetterRouting.fixed(plan.deadLetterTopic()));
        }
        return builder.build();
    }

    private static Map<String, Object> withGroup(Map<String, Object> kafka, ListenerPlan plan) {
        Map<String, Object> config = new HashMap<>(kafka);
        config.put("group.id", plan.group());
        return config;
    }
}
