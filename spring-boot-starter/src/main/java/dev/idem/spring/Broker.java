package dev.idem.spring;

/** The broker an {@link IdempotentListener} consumes from. */
public enum Broker {
    /** A Kafka consumer group ({@code idem.kafka.*}). */
    KAFKA,
    /** A Kafka share group, KIP-932 ({@code idem.kafka.*}; brokers and clients 4.2 or newer). */
    KAFKA_SHARE,
    /** RocketMQ ({@code idem.rocketmq.name-server}). */
    ROCKETMQ
}
