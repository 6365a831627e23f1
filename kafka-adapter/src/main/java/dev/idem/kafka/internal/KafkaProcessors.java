package dev.idem.kafka.internal;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.ProcessorComposer;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.kafka.KafkaDeadLetterPublisher;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * What a Kafka consumer brings to the processor it runs ({@link ProcessorComposer}, decision 0052):
 * its {@code group.id}, and, when the user set no dead-letter publisher, a
 * {@link KafkaDeadLetterPublisher} on the consumer's cluster with the consumer's routing. Not public
 * API. Thread-safe (no state).
 */
public final class KafkaProcessors {

    private KafkaProcessors() {
    }

    /** The composer of a consumer of {@code config}: add the consumer's limits, if any, then compose. */
    public static ProcessorComposer composer(Map<String, Object> config, String groupId,
                                             UnaryOperator<DeadLetterPublisher> decorator, DeadLetterRouting routing) {
        return ProcessorComposer.forConsumer("group.id", groupId)
                .ownPublisher(() -> KafkaDeadLetterPublisher.builder(producerSide(config)).routing(routing).build())
                .decorator(decorator);
    }

    /** The consumer's settings minus what only a consumer can use: its interceptors are not a producer's. */
    private static Map<String, Object> producerSide(Map<String, Object> config) {
        Map<String, Object> producer = new HashMap<>(config);
        producer.remove(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
        return producer;
    }
}
