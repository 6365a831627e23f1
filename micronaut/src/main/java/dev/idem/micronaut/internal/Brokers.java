package dev.idem.micronaut.internal;

import dev.idem.core.ConsumerState;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.micronaut.Broker;
import dev.idem.micronaut.IdemListeners.RunningListener;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds and starts the adapters' consumers; each broker's classes are touched only when a
 * listener uses that broker, so an application needs only the adapter it uses.
 */
public final class Brokers {

    private static final Logger LOG = LoggerFactory.getLogger(Brokers.class);

    private Brokers() {
    }

    /** An {@link IdemKafkaConsumer} for the listener, started. */
    public static RunningListener kafka(String name, String topic, String group, IdempotentProcessor.Builder<Object> processor,
                                        Map<String, Object> settings, String deadLetterTopic, int concurrency,
                                        Duration closeTimeout, BrokerOptions options) {
        Map<String, Object> config = new HashMap<>(settings);
        config.put("group.id", group);
        IdemKafkaConsumer.Builder<Object> builder = IdemKafkaConsumer.builder(config, processor)
                .topics(topic)
                .concurrency(concurrency > 0 ? concurrency : 1)
                .closeTimeout(closeTimeout)
                .onFailure(failure -> LOG.warn("Idem listener '{}' trouble", name, failure));
        options.joinTimeout().ifPresent(builder::joinTimeout);
        if (!deadLetterTopic.isBlank()) {
            builder.deadLetterRouting(DeadLetterRouting.fixed(deadLetterTopic));
        }
        IdemKafkaConsumer<Object> consumer = builder.build();
        consumer.start();
        // The consumer closes its dead-letter producer once no record can publish any more.
        return new RunningListener(name, Broker.KAFKA, topic, group,
                () -> consumer.state().isLive(),
                consumer::oldestDeferral, consumer::close, consumer.released());
    }

    /** An {@link IdemRocketMqConsumer} for the listener, started. */
    public static RunningListener rocketMq(String name, String topic, String group,
                                           IdempotentProcessor.Builder<Object> processor, String nameServer,
                                           String deadLetterTopic, int concurrency, Duration closeTimeout,
                                           BrokerOptions options) {
        IdemRocketMqConsumer.Builder<Object> builder = IdemRocketMqConsumer.builder(nameServer, group, processor)
                .subscribe(topic, "*").closeTimeout(closeTimeout);
        if (concurrency > 0) {
            builder.concurrency(concurrency);
        }
        options.batchSize().ifPresent(builder::batchSize);
        options.orderly().ifPresent(builder::orderly);
        options.firstOffset().ifPresent(first -> builder.consumeFrom(first
                ? ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET : ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET));
        if (!deadLetterTopic.isBlank()) {
            builder.deadLetterRouting(DeadLetterRouting.fixed(deadLetterTopic));
        }
        IdemRocketMqConsumer<Object> consumer = builder.build();
        consumer.start();
        // Its close returns once its listener calls ended or were interrupted, and its processor closed.
        CompletableFuture<Void> released = new CompletableFuture<>();
        return new RunningListener(name, Broker.ROCKETMQ, topic, group,
                () -> consumer.state() == ConsumerState.RUNNING, consumer::oldestDeferral,
                () -> {
                    try {
                        consumer.close();
                    } finally {
                        released.complete(null);
                    }
                }, released);
    }
}
