package dev.idem.kafka.internal;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.kafka.KafkaDeadLetterPublisher;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Composes a processor the one way both Kafka entry points do (decision 0011): the group comes
 * from {@code group.id} unless the user set the same one, the dead-letter publisher is the user's
 * or else a {@link KafkaDeadLetterPublisher} on the consumer's cluster with the consumer's routing, and the user's decorator
 * wraps whichever it is. The user's builder is left as it was found, so it can build again.
 */
public final class KafkaProcessors {

    private KafkaProcessors() {
    }

    /**
     * A built processor and the publisher the adapter created for it (null when the user brought
     * one), which the adapter closes after the processor.
     *
     * @param <T> payload type
     */
    public record Composed<T>(IdempotentProcessor<T> processor, KafkaDeadLetterPublisher ownPublisher) {

        /** Closes the processor, then the adapter's own publisher. */
        public void close() {
            try {
                processor.close();
            } finally {
                if (ownPublisher != null) {
                    ownPublisher.close();
                }
            }
        }
    }

    /** The consumer's settings minus what only a consumer can use: its interceptors are not a producer's. */
    private static Map<String, Object> producerSide(Map<String, Object> config) {
        Map<String, Object> producer = new HashMap<>(config);
        producer.remove(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
        return producer;
    }

    /**
     * @throws IllegalArgumentException if the builder's group differs from {@code group.id}, naming
     *                                  both, or if the processor settings are wrong
     */
    public static <T> Composed<T> compose(Map<String, Object> config, String groupId,
                                          IdempotentProcessor.Builder<T> builder,
                                          UnaryOperator<DeadLetterPublisher> decorator,
                                          DeadLetterRouting routing) {
        String userGroup = builder.group();
        if (userGroup != null && !userGroup.equals(groupId)) {
            throw new IllegalArgumentException("the processor's group '" + userGroup + "' differs from group.id '"
                    + groupId + "': Idem's keys are namespaced by the consumer group, so the two must be the same "
                    + "(leave the processor's group unset and it is taken from group.id)");
        }
        DeadLetterPublisher userPublisher = builder.deadLetters();
        KafkaDeadLetterPublisher own = userPublisher == null
                ? KafkaDeadLetterPublisher.builder(producerSide(config)).routing(routing).build() : null;
        try {
            DeadLetterPublisher publisher = decorator.apply(userPublisher != null ? userPublisher : own);
            if (publisher == null) {
                throw new IllegalArgumentException("deadLetters decorator must return a publisher but returned null");
            }
            builder.group(groupId).deadLetters(publisher);
            return new Composed<>(builder.build(), own);
        } catch (RuntimeException | Error e) {
            if (own != null) {
                own.close();
            }
            throw e;
        } finally {
            builder.group(userGroup).deadLetters(userPublisher);
        }
    }
}
