package dev.idem.core;

import java.util.Objects;
import java.util.function.Function;

/**
 * Where a message's idempotency key comes from. A business key taken from the payload is the
 * recommended way: the broker's message id differs between two sends of the same business event.
 * Thread-safe.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface KeySource<T> {

    /**
     * @return the key, or null if the message has none
     */
    String keyOf(Envelope envelope, T payload);

    /** A business key computed from the decoded payload, e.g. {@code order -> order.id() + ":reserve"}. */
    static <T> KeySource<T> payload(Function<? super T, String> key) {
        Objects.requireNonNull(key, "key");
        return (envelope, payload) -> key.apply(payload);
    }

    /** The value of a header (Kafka header, RocketMQ user property). */
    static <T> KeySource<T> header(String name) {
        Objects.requireNonNull(name, "name");
        return (envelope, payload) -> envelope.headers().get(name);
    }

    /**
     * The broker's message id (Kafka topic-partition@offset, RocketMQ unique id): stable across
     * redeliveries, but a producer that sends the same event twice makes two ids.
     */
    static <T> KeySource<T> messageId() {
        return (envelope, payload) -> envelope.messageId();
    }

    /**
     * The broker's message key (Kafka record key, RocketMQ keys): a business key when producers set
     * one. A key that is valid UTF-8 text without control characters is used as it is; any other
     * (a binary Long, Avro or Protobuf key) is used as {@code b64:} and its URL-safe Base64, so two
     * different binary keys never become one.
     */
    static <T> KeySource<T> messageKey() {
        return (envelope, payload) -> MessageKeys.text(envelope.messageKey());
    }

    /** This source, or {@code fallback} when this one finds no key. */
    default KeySource<T> orElse(KeySource<T> fallback) {
        Objects.requireNonNull(fallback, "fallback");
        return (envelope, payload) -> {
            String key = keyOf(envelope, payload);
            return key == null || key.isBlank() ? fallback.keyOf(envelope, payload) : key;
        };
    }
}
