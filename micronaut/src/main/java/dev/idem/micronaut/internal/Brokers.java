package dev.idem.micronaut.internal;

import dev.idem.core.ConsumerState;
import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.listener.ListenerConsumers;
import dev.idem.listener.ListenerSpec;
import dev.idem.micronaut.Broker;
import dev.idem.micronaut.IdemListeners.RunningListener;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Starts a listener's consumer and says how the application's stop closes it; each broker's classes
 * are touched only when a listener uses that broker, so an application needs only the adapter it uses.
 */
public final class Brokers {

    private Brokers() {
    }

    /** An {@link IdemKafkaConsumer} for the listener, started. */
    public static RunningListener kafka(ListenerSpec spec, IdempotentProcessor.Builder<Object> processor,
                                        Map<String, Object> client) {
        IdemKafkaConsumer<Object> consumer = ListenerConsumers.kafka(spec, processor, client);
        consumer.start();
        // The consumer closes its dead-letter producer once no record can publish any more.
        return new RunningListener(spec.name(), Broker.KAFKA, spec.topic(), spec.group(),
                () -> consumer.state().isLive(), consumer::oldestDeferral, consumer::close, consumer.released());
    }

    /** An {@link IdemRocketMqConsumer} for the listener, started. */
    public static RunningListener rocketMq(ListenerSpec spec, IdempotentProcessor.Builder<Object> processor,
                                           String nameServer) {
        IdemRocketMqConsumer<Object> consumer = ListenerConsumers.rocketMq(spec, processor, nameServer);
        consumer.start();
        // Its close returns once its listener calls ended or were interrupted, and its processor closed.
        CompletableFuture<Void> released = new CompletableFuture<>();
        return new RunningListener(spec.name(), Broker.ROCKETMQ, spec.topic(), spec.group(),
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
