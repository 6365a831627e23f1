package dev.idem.rocketmq;

import dev.idem.core.ConsumerState;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.ProcessorComposer;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.rocketmq.internal.DistinctClients;
import dev.idem.rocketmq.internal.InstanceNames;
import dev.idem.rocketmq.internal.ListenerGate;
import dev.idem.rocketmq.internal.OrderedShutdown;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.remoting.RPCHook;
import org.jspecify.annotations.Nullable;

/**
 * Builds, starts and stops a {@code DefaultMQPushConsumer} whose listener runs an Idem processor:
 *
 * <pre>{@code
 * IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer.builder("localhost:9876", "inventory",
 *         ledger.processor(handler).claims(claims)
 *             .codec(PayloadCodec.json(Order.class)).keys(KeySource.payload(Order::id)))
 *     .subscribe("orders", "*").build();
 * consumer.start();
 * ...
 * consumer.close(); // stop taking work, let running handlers finish, shut the client, then Idem
 * }</pre>
 *
 * The processor's group and dead-letter publisher are the consumer's when unset (a group different from
 * the consumer's is refused). Idem sets {@code maxReconsumeTimes} to its attempts plus room for busy
 * and deferred redeliveries, so Idem, not the broker, decides when a message is dead. Each consumer
 * gets an instance name unique in its process and across processes, and counts each client of its
 * group once when queues are divided (the broker can list a reconnected client twice). Thread-safe.
 *
 * @param <T> payload type
 */
public final class IdemRocketMqConsumer<T> implements IdemConsumer {

    private final DefaultMQPushConsumer consumer;
    private final ProcessorComposer.Composed<T> composed;
    private final ListenerGate gate = new ListenerGate();
    private final Duration closeTimeout;
    private boolean closed;

    private IdemRocketMqConsumer(Builder<T> b) {
        this.closeTimeout = b.closeTimeout;
        // (group, hook, strategy): the constructor with a hook that both the 4.9 and 5.x clients have.
        consumer = b.rpcHook == null ? new DefaultMQPushConsumer(b.group)
                : new DefaultMQPushConsumer(b.group, b.rpcHook, new AllocateMessageQueueAveragely());
        consumer.setNamesrvAddr(b.nameServerAddress);
        b.client.accept(consumer);
        // Around the strategy the client settings chose: a client the broker lists twice counts once.
        consumer.setAllocateMessageQueueStrategy(new DistinctClients(consumer.getAllocateMessageQueueStrategy()));
        consumer.setConsumeFromWhere(b.consumeFrom);
        consumer.setConsumeMessageBatchMaxSize(b.batchSize);
        consumer.setConsumeThreadMin(b.concurrency);
        consumer.setConsumeThreadMax(b.concurrency);
        consumer.setInstanceName(InstanceNames.next(b.group));
        PushConsumerRules.requireClustering(consumer);
        try {
            for (Map.Entry<String, String> subscription : b.subscriptions.entrySet()) {
                consumer.subscribe(subscription.getKey(), subscription.getValue());
            }
        } catch (MQClientException e) {
            throw new IllegalArgumentException("cannot subscribe " + b.subscriptions + ": " + e.getMessage(), e);
        }
        this.composed = ProcessorComposer.forConsumer("group", b.group)
                .ownPublisher(() -> RocketMqDeadLetterPublisher.start(consumer, b.routing)).decorator(b.deadLetters)
                .compose(b.processor);
        IdempotentProcessor<T> processor = composed.processor();
        consumer.setMaxReconsumeTimes(processor.maxAttempts() + PushConsumerRules.RECONSUME_HEADROOM);
        Duration maxStall = PushConsumerRules.maxStall(consumer);
        if (b.orderly) {
            consumer.registerMessageListener(IdemOrderlyListener.of(processor, gate, maxStall));
        } else {
            consumer.registerMessageListener(IdemConcurrentlyListener.of(processor, b.delayLevels, gate, maxStall));
        }
    }

    /**
     * A builder for a consumer of {@code group} on the name server at {@code nameServerAddress},
     * running {@code processor}. Its group and dead-letter publisher are the consumer's when unset;
     * {@code processor} itself is left as it is.
     */
    public static <T> Builder<T> builder(String nameServerAddress, String group, IdempotentProcessor.Builder<T> processor) {
        return new Builder<>(nameServerAddress, group, processor);
    }

    /**
     * Starts consuming.
     *
     * @throws IllegalStateException if the client cannot start
     */
    @Override
    public void start() {
        try {
            consumer.start();
        } catch (MQClientException e) {
            throw new IllegalStateException("could not start the RocketMQ consumer " + consumer.getConsumerGroup(), e);
        }
    }

    /** The underlying consumer. Change its settings with {@link Builder#client}. */
    public DefaultMQPushConsumer consumer() {
        return consumer;
    }

    /**
     * How long the message deferred longest in a row has been coming back unsettled; empty when none
     * is ({@link IdempotentProcessor#oldestDeferral()}).
     */
    @Override
    public Optional<Duration> oldestDeferral() {
        return composed.processor().oldestDeferral();
    }

    /**
     * Where the consumer is in its life, as every Idem consumer says it: {@link ConsumerState#RUNNING}
     * when healthy. Read from the RocketMQ client's service state.
     */
    @Override
    public ConsumerState state() {
        return switch (consumer.getDefaultMQPushConsumerImpl().getServiceState()) {
            case CREATE_JUST -> ConsumerState.NEW;
            case RUNNING -> ConsumerState.RUNNING;
            case SHUTDOWN_ALREADY -> ConsumerState.STOPPED;
            case START_FAILED -> ConsumerState.FAILED;
        };
    }

    /**
     * Closes in order: stops taking work, lets running listener calls finish (up to
     * {@link Builder#closeTimeout}), shuts the client down (committing what finished), then stops lease
     * renewal and Idem's dead-letter producer. What was pulled but not processed stays
     * unacknowledged and is redelivered; what was left is logged.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        OrderedShutdown.stop(consumer, gate, closeTimeout);
        composed.close();
    }

    /** Builds an {@link IdemRocketMqConsumer}; {@link #build()} names a wrong setting. Not thread-safe. */
    public static final class Builder<T> {

        private final String nameServerAddress;
        private final String group;
        private final IdempotentProcessor.Builder<T> processor;
        private final Map<String, String> subscriptions = new LinkedHashMap<>();
        private DeadLetterRouting routing = DeadLetterRouting.ROCKETMQ_DEFAULT;
        private UnaryOperator<DeadLetterPublisher> deadLetters = UnaryOperator.identity();
        private DelayLevels delayLevels = DelayLevels.defaults();
        private ConsumeFromWhere consumeFrom = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET;
        private Consumer<DefaultMQPushConsumer> client = c -> { };
        private @Nullable RPCHook rpcHook;
        private boolean orderly;
        private int batchSize = 1;
        private int concurrency = 20;
        // The default claim lease: a handler running longer may already have lost its claim.
        private Duration closeTimeout = IdemConsumer.DEFAULT_CLOSE_TIMEOUT;

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

        /** Consume threads: listener calls run at once. Default 20, RocketMQ's own default. */
        public Builder<T> concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /** Where a new group starts. Default: the last offset, RocketMQ's default. */
        public Builder<T> consumeFrom(ConsumeFromWhere consumeFrom) {
            this.consumeFrom = consumeFrom;
            return this;
        }

        /** Where Idem's dead-letter publisher sends dead letters. Default {@code <topic>_DLQ}. */
        public Builder<T> deadLetterRouting(DeadLetterRouting routing) {
            this.routing = routing;
            return this;
        }

        /**
         * Wraps the dead-letter publisher in use (metrics, auditing, a copy elsewhere): the decorator
         * gets the processor's own publisher if it has one, else Idem's RocketMQ publisher, and returns
         * the one the processor uses. Default: none.
         */
        public Builder<T> deadLetters(UnaryOperator<DeadLetterPublisher> decorator) {
            this.deadLetters = decorator;
            return this;
        }

        /** The broker's {@code messageDelayLevel} table, to map backoffs onto. Default: RocketMQ's. */
        public Builder<T> delayLevels(DelayLevels delayLevels) {
            this.delayLevels = delayLevels;
            return this;
        }

        /** The RPC hook (ACL credentials) of the consumer and of Idem's dead-letter producer. Default: none. */
        public Builder<T> rpcHook(RPCHook rpcHook) {
            this.rpcHook = rpcHook;
            return this;
        }

        /**
         * Client settings Idem does not cover (namespace, TLS, access channel, pull sizes...), applied
         * to the consumer before Idem's own; Idem's dead-letter producer copies the client settings.
         * Broadcasting is refused.
         */
        public Builder<T> client(Consumer<DefaultMQPushConsumer> client) {
            this.client = client;
            return this;
        }

        /** How long {@link IdemRocketMqConsumer#close()} lets running listener calls finish. Default 30 s. */
        public Builder<T> closeTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
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
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be >= 1 but was " + concurrency);
            }
            if (closeTimeout == null || closeTimeout.isNegative()) {
                throw new IllegalArgumentException("closeTimeout must be >= 0 but was " + closeTimeout);
            }
            Objects.requireNonNull(routing, "deadLetterRouting");
            Objects.requireNonNull(deadLetters, "deadLetters");
            Objects.requireNonNull(delayLevels, "delayLevels");
            Objects.requireNonNull(client, "client");
            return new IdemRocketMqConsumer<>(this);
        }
    }
}
