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
    MESSAGE_ID,
    /**
     * The id an Idem outbox gave the message (header {@code idem-message-id}): the same for every copy
     * the relay publishes, so a consumer downstream of an outbox applies each message once.
     */
    OUTBOX_ID
}
