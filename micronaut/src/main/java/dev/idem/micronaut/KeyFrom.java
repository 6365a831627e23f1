package dev.idem.micronaut;

/** Where an {@link IdempotentListener}'s idempotency key comes from. */
public enum KeyFrom {
    /** A property of the decoded payload ({@link IdempotentListener#key()}): a business key. */
    PROPERTY,
    /** A header (Kafka header, RocketMQ user property) named by {@link IdempotentListener#key()}. */
    HEADER,
    /** The broker's message key (Kafka record key, RocketMQ keys). */
    MESSAGE_KEY,
    /** The broker's message id: stable across redeliveries, not across two sends of one event. */
    MESSAGE_ID
}
