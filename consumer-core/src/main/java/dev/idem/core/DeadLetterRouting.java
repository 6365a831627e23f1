package dev.idem.core;

import java.util.Objects;

/** Which dead-letter topic a source topic's failures go to. Thread-safe. */
@FunctionalInterface
public interface DeadLetterRouting {

    /** The dead-letter topic for messages from {@code topic}. */
    String deadLetterTopic(String topic);

    /** Kafka's default: the source topic plus {@code .DLT}, as spring-kafka names them. */
    DeadLetterRouting KAFKA_DEFAULT = suffix(".DLT");
    /** RocketMQ's default: the source topic plus {@code _DLQ}. */
    DeadLetterRouting ROCKETMQ_DEFAULT = suffix("_DLQ");

    /** The source topic plus a suffix: Kafka's default {@code ".DLT"}, RocketMQ's {@code "_DLQ"}. */
    static DeadLetterRouting suffix(String suffix) {
        Objects.requireNonNull(suffix, "suffix");
        if (suffix.isEmpty()) {
            throw new IllegalArgumentException("suffix must not be empty: dead letters would go back to the source");
        }
        return topic -> topic + suffix;
    }

    /** One dead-letter topic for every source topic. */
    static DeadLetterRouting fixed(String deadLetterTopic) {
        Objects.requireNonNull(deadLetterTopic, "deadLetterTopic");
        return topic -> deadLetterTopic;
    }
}
