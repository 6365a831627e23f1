package dev.idem.core;

import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Where a message's idempotency key comes from. A business key taken from the payload is the
 * recommended way: the broker's message id differs between two sends of the same business event.
 * Every key, from these sources or from your own, is turned into key text by one rule
 * ({@link KeyText}): text as it is, anything a store cannot keep as it is (bytes that are not UTF-8,
 * a NUL, a lone surrogate) as {@code b64:} and its URL-safe Base64, so two keys never become one.
 * Thread-safe.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface KeySource<T> {

    /**
     * @param payload the decoded payload; null when the body could not be decoded (a key from the
     *                payload then fails or is null, and the decode failure is the message's defect)
     * @return the key, or null if the message has none
     */
    @Nullable String keyOf(Envelope envelope, @Nullable T payload);

    /** A business key computed from the decoded payload, e.g. {@code order -> order.id() + ":reserve"}. */
    static <T> KeySource<T> payload(Function<? super T, String> key) {
        Objects.requireNonNull(key, "key");
        return (KeySource<T> & KeyTextSource) (envelope, payload) -> KeyText.of(key.apply(payload));
    }

    /**
     * The value of a header (Kafka header, RocketMQ user property), by the rule of {@link KeyText}:
     * binary header values (not UTF-8) stay distinct. The envelope's header text is already Base64
     * where the value was not text ({@link KeyText#headerText}), and is taken as it is then.
     */
    static <T> KeySource<T> header(String name) {
        Objects.requireNonNull(name, "name");
        return (KeySource<T> & KeyTextSource) (envelope, payload) -> {
            String value = envelope.headers().get(name);
            return KeyText.isEncoded(value) ? value : KeyText.of(value);
        };
    }

    /**
     * The id an Idem outbox gave the message ({@link dev.idem.core.outbox.OutboxHeaders#MESSAGE_ID}): the
     * same on every publication and on every re-run of the handler that sent it, so a consumer
     * downstream of an outbox applies each message once.
     */
    static <T> KeySource<T> outboxId() {
        return header(dev.idem.core.outbox.OutboxHeaders.MESSAGE_ID);
    }

    /**
     * The broker's message id (Kafka topic-partition@offset, RocketMQ unique id): stable across
     * redeliveries, but a producer that sends the same event twice makes two ids.
     */
    static <T> KeySource<T> messageId() {
        return (KeySource<T> & KeyTextSource) (envelope, payload) -> KeyText.of(envelope.messageId());
    }

    /**
     * The broker's message key (Kafka record key, RocketMQ keys): a business key when producers set
     * one. A key that is valid UTF-8 text without control characters is used as it is; any other
     * (a binary Long, Avro or Protobuf key) is used as {@code b64:} and its URL-safe Base64, so two
     * different binary keys never become one.
     */
    static <T> KeySource<T> messageKey() {
        return (KeySource<T> & KeyTextSource) (envelope, payload) -> KeyText.of(envelope.messageKey());
    }

    /** This source, or {@code fallback} when this one finds no key. */
    default KeySource<T> orElse(KeySource<T> fallback) {
        Objects.requireNonNull(fallback, "fallback");
        KeySource<T> first = KeyTextSource.of(this);
        KeySource<T> second = KeyTextSource.of(fallback);
        return (KeySource<T> & KeyTextSource) (envelope, payload) -> {
            String key = first.keyOf(envelope, payload);
            return key == null || key.isBlank() ? second.keyOf(envelope, payload) : key;
        };
    }
}
