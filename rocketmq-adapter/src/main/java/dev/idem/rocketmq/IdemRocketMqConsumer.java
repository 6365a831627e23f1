package dev.idem.rocketmq;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.DeadLetterRouting;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;

/**
 * Builds, starts and stops a {@code DefaultMQPushConsumer} whose listener runs an Idem processor:
 *
 * <pre>{@code
 * IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer.builder("localhost:9876", "inventory", processor)
 *     .subscribe("orders", "*").build();
 * consumer.start();
 * }</pre>
 *
 * Idem sets {@code maxReconsumeTimes} to its attempts plus room for busy redeliveries, so Idem,
 * not the broker, decides when a message is dead. Thread-safe.
 *
 * @param <T> payload type
 */
public final class IdemRocketMqConsumer<T> implements AutoCloseable {

    // Busy and deferred redeliveries also raise reconsumeTimes. Busy ones wait for the holder's
    // lease and deferred ones back off, so this much room covers a crashed owner and a long outage.
    private static final int RECONSUME_HEADROOM = 32;

    private final DefaultMQPushConsumer consumer;
    private final IdempotentProcessor<T> processor;
    private final RocketMqDeadLetterPublisher deadLetters;

    private IdemRocketMqConsumer(Builder<T> b) {
        this.deadLetters = RocketMqDeadLetterPublisher.start(b.nameServerAddress, b.group, b.routing);
        try {
            this.processor = b.processor.group(b.group).deadLetters(deadLetters).build();
        } catch (RuntimeException e) {
            deadLetters.close();
            throw e;
        }
        consumer = new DefaultMQPushConsumer(b.group);
        consumer.setNamesrvAddr(b.nameServerAddress);
        consumer.setConsumeFromWhere(b.consumeFrom);
        consumer.setConsumeMessageBatchMaxSize(b.batchSize);
        consumer.setConsumeThreadMin(b.threads);
        consumer.setConsumeThreadMax(b.threads);
        consumer.setMaxReconsumeTimes(b.processor.maxAttempts() + RECONSUME_HEADROOM);
        consumer.setInstanceName(b.group + "-" + System.identityHashCode(this));
        try {
            for (Map.Entry<String, String> subscription : b.subscriptions.entrySet()) {
                consumer.subscribe(subscription.getKey(), subscription.getValue());
            }
        } catch (MQClientException e) {
            close();
            throw new IllegalArgumentException("cannot subscribe " + b.subscriptions + ": " + e.getMessage(), e);
        }
        if (b.orderly) {
            consumer.registerMessageListener(IdemOrderlyListener.of(processor));
        } else {
            consumer.registerMessageListener(IdemConcurrentlyListener.of(processor, b.delayLevels));
        }
    }

    /**
     * A builder for a consumer of {@code group} on the name server at {@code nameServerAddress},
     * running {@code processor} (whose group and dead letters the consumer fills in).
     */
    public static <T> Builder<T> builder(String nameServerAddress, String group, IdempotentProcessor.Builder<T> processor) {
        return new Builder<>(nameServerAddress, group, processor);
    }

    /**
     * Starts consuming.
     *
     * @throws IllegalStateException if the client cannot start
     */
    public void start() {
        try {
            consumer.start();
        } catch (MQClientException e) {
            throw new IllegalStateException("could not start the RocketMQ consumer " + consumer.getConsumerGroup(), e);
        }
    }

    /** The underlying consumer, for settings Idem does not cover. Change nothing Idem set. */
    public DefaultMQPushConsumer consumer() {
        return consumer;
    }

    /** Stops consuming, then the dead-letter producer and lease renewal. */
    @Override
    public void close() {
        consumer.shutdown();
        processor.close();
        deadLetters.close();
    }

    /** Builds an {@link IdemRocketMqConsumer}; {@link #build()} names a wrong setting. Not thread-safe. */
    public static final class Builder<T> {

        private final String nameServerAddress;
        private final String group;
        private final IdempotentProcessor.Builder<T> processor;
        private final Map<String, String> subscriptions = new LinkedHashMap<>();
        private DeadLetterRouting routing = DeadLetterRouting.suffix("_DLQ");
        private DelayLevels delayLevels = DelayLevels.defaults();
        private ConsumeFromWhere consumeFrom = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET;
        private boolean orderly;
        private int batchSize = 1;
        private int threads = 20;

        private Builder(String nameServerAddress, String group, IdempotentProcessor.Builder<T> processor) {
            this.nameServerAddress = nameServerAddress;
            this.group = group;
            this.processor = Objects.requireNonNull(processor, "processor");
        }

        /** Subscribes to {@code topic} with a tag expression ({@code "*"} for all). At least one is required. */
        public Builder<T> subscribe(String topic, String tags) {
            subscriptions.put(topic, tags);
            return this;
        }

        /** Consume each queue in order (an orderly listener). Default: concurrently. */
        public Builder<T> orderly(boolean orderly) {
            this.orderly = orderly;
            return this;
        }

        /** {@code consumeMessageBatchMaxSize}: messages per listener call, claimed in one round trip. Default 1. */
        public Builder<T> batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /** Consume threads. Default 20, RocketMQ's own default. */
        public Builder<T> threads(int threads) {
            this.threads = threads;
            return this;
        }

        /** Where a new group starts. Default: the last offset, RocketMQ's default. */
        public Builder<T> consumeFrom(ConsumeFromWhere consumeFrom) {
            this.consumeFrom = consumeFrom;
            return this;
        }

        /** Where dead letters go. Default {@code <topic>_DLQ}. */
        public Builder<T> deadLetterRouting(DeadLetterRouting routing) {
            this.routing = routing;
            return this;
        }

        /** The broker's {@code messageDelayLevel} table, to map backoffs onto. Default: RocketMQ's. */
        public Builder<T> delayLevels(DelayLevels delayLevels) {
            this.delayLevels = delayLevels;
            return this;
        }

        /** @throws IllegalArgumentException naming the first wrong setting */
        public IdemRocketMqConsumer<T> build() {
            if (nameServerAddress == null || nameServerAddress.isBlank()) {
                throw new IllegalArgumentException("nameServerAddress must not be blank but was '" + nameServerAddress + "'");
            }
            if (group == null || group.isBlank()) {
                throw new IllegalArgumentException("group must not be blank but was '" + group + "'");
            }
            if (subscriptions.isEmpty()) {
                throw new IllegalArgumentException("subscribe(topic, tags) must be called at least once");
            }
            if (subscriptions.keySet().stream().anyMatch(topic -> topic.contains("."))) {
                throw new IllegalArgumentException("RocketMQ topic names cannot contain '.' but were " + subscriptions.keySet());
            }
            if (batchSize < 1 || batchSize > 1024) {
                throw new IllegalArgumentException("batchSize must be between 1 and 1024 but was " + batchSize);
            }
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1 but was " + threads);
            }
            Objects.requireNonNull(routing, "deadLetterRouting");
            Objects.requireNonNull(delayLevels, "delayLevels");
            return new IdemRocketMqConsumer<>(this);
        }
    }
}
