package dev.idem.spring;

/** Where an {@link IdempotentListener}'s idempotency key comes from. */
public enum KeyFrom {
    /** A property of the decoded payload: {@link IdempotentListener#key()} names it ({@code id}, {@code order.id}). */
    PROPERTY,
    /** The broker's message key (Kafka record key, RocketMQ keys). */
    MESSAGE_KEY,
    /** The broker's message id (Kafka topic-partition@offset, RocketMQ's unique client id): copies a producer retried are not caught. */
    MESSAGE_ID,
    /** A header (Kafka header, RocketMQ user property): {@link IdempotentListener#key()} names it. */
    HEADER,
    /**
     * The id an Idem outbox gave the message (header {@code idem-message-id}): the same for every copy
     * the relay publishes, so a consumer downstream of an outbox applies each message once.
     */
    OUTBOX_ID
}
