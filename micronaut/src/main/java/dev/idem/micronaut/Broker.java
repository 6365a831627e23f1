package dev.idem.micronaut;

/** The broker an {@link IdempotentListener} consumes from. */
public enum Broker {
    /** Apache Kafka, through {@code idem-kafka-adapter} and {@code idem.kafka.*}. */
    KAFKA,
    /** Apache RocketMQ, through {@code idem-rocketmq-adapter} and {@code idem.rocketmq.*}. */
    ROCKETMQ
}
