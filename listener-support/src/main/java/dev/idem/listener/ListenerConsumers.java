package dev.idem.listener;

import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.share.IdemKafkaShareConsumer;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a declared listener's consumer on its broker, not started, from its spec and processor:
 * every consumer setting the spec sets, and nothing it leaves unset. A broker's classes are touched
 * only when a listener uses that broker, so an application needs only the adapters it uses.
 */
public final class ListenerConsumers {

    private static final Logger LOG = LoggerFactory.getLogger(ListenerConsumers.class);

    private ListenerConsumers() {
    }

    /**
     * An {@link IdemKafkaConsumer} for the listener.
     *
     * @param client the Kafka client's settings; the listener's group is set on a copy
     * @throws IllegalArgumentException as {@link ListenerSpec#failure} says, when a builder refuses a setting
     */
    public static IdemKafkaConsumer<Object> kafka(ListenerSpec spec, IdempotentProcessor.Builder<Object> processor,
                                                  Map<String, Object> client) {
        IdemKafkaConsumer.Builder<Object> builder = IdemKafkaConsumer.builder(withGroup(client, spec), processor)
                .topics(spec.topic()).onFailure(failure -> LOG.warn("Idem listener '{}' trouble", spec.name(), failure));
        spec.get(ListenerSetting.CONCURRENCY).ifPresent(builder::concurrency);
        spec.get(ListenerSetting.CLOSE_TIMEOUT).ifPresent(builder::closeTimeout);
        spec.get(ListenerSetting.JOIN_TIMEOUT).ifPresent(builder::joinTimeout);
        ListenerProcessors.deadLetterRouting(spec).ifPresent(builder::deadLetterRouting);
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(spec.failure(e), e);
        }
    }

    /** An {@link IdemKafkaShareConsumer} for the listener; as {@link #kafka}. */
    public static IdemKafkaShareConsumer<Object> kafkaShare(ListenerSpec spec,
                                                            IdempotentProcessor.Builder<Object> processor,
                                                            Map<String, Object> client) {
        // Written out as in kafka(): a helper over both builders' common type would make verifying this
        // class load the Kafka adapter, which an application on RocketMQ alone does not have.
        IdemKafkaShareConsumer.Builder<Object> builder = IdemKafkaShareConsumer.builder(withGroup(client, spec), processor)
                .topics(spec.topic()).onFailure(failure -> LOG.warn("Idem listener '{}' trouble", spec.name(), failure));
        spec.get(ListenerSetting.CONCURRENCY).ifPresent(builder::concurrency);
        spec.get(ListenerSetting.CLOSE_TIMEOUT).ifPresent(builder::closeTimeout);
        spec.get(ListenerSetting.DELIVERY_LIMIT_REFRESH).ifPresent(builder::deliveryLimitRefresh);
        ListenerProcessors.deadLetterRouting(spec).ifPresent(builder::deadLetterRouting);
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(spec.failure(e), e);
        }
    }

    /**
     * An {@link IdemRocketMqConsumer} for the listener, subscribed to its topic (every tag).
     *
     * @throws IllegalArgumentException as {@link ListenerSpec#failure} says, when a builder refuses a setting
     */
    public static IdemRocketMqConsumer<Object> rocketMq(ListenerSpec spec, IdempotentProcessor.Builder<Object> processor,
                                                        String nameServer) {
        IdemRocketMqConsumer.Builder<Object> builder = IdemRocketMqConsumer.builder(nameServer, spec.group(), processor)
                .subscribe(spec.topic(), "*");
        spec.get(ListenerSetting.CONCURRENCY).ifPresent(builder::concurrency);
        spec.get(ListenerSetting.CLOSE_TIMEOUT).ifPresent(builder::closeTimeout);
        spec.get(ListenerSetting.BATCH_SIZE).ifPresent(builder::batchSize);
        spec.get(ListenerSetting.ORDERLY).ifPresent(builder::orderly);
        spec.get(ListenerSetting.CONSUME_FROM).ifPresent(from -> builder.consumeFrom(from == ConsumeFrom.FIRST_OFFSET
                ? ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET : ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET));
        ListenerProcessors.deadLetterRouting(spec).ifPresent(builder::deadLetterRouting);
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(spec.failure(e), e);
        }
    }

    private static Map<String, Object> withGroup(Map<String, Object> client, ListenerSpec spec) {
        Map<String, Object> config = new HashMap<>(client);
        config.put("group.id", spec.group());
        return config;
    }
}
