package dev.idem.testkit;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One message read back from a topic by {@link KafkaBroker#read} or {@link RocketMqBroker#read}, the
 * same shape for both brokers: what a test asserts on a dead letter (its body, Idem's {@code idem-}
 * headers, named by {@code dev.idem.core.DeadLetterHeaders}) or on any topic's records. Immutable.
 *
 * @param topic   the topic it was read from
 * @param key     the Kafka record key, or the RocketMQ message's keys as UTF-8; null when none
 * @param body    the value (Kafka) or body (RocketMQ); null for a Kafka tombstone
 * @param headers Kafka headers (the last value of a repeated name) or RocketMQ user properties, as UTF-8
 * @param source  the broker's own message: a Kafka {@code ConsumerRecord<byte[], byte[]>} or a RocketMQ
 *                {@code MessageExt}
 */
public record TopicMessage(String topic, byte @Nullable [] key, byte @Nullable [] body, Map<String, String> headers,
                           Object source) {

    /** @throws NullPointerException if topic, headers or source is null */
    public TopicMessage {
        Objects.requireNonNull(topic, "topic");
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
        Objects.requireNonNull(source, "source");
    }

    /** The header's value, or null when the message has none of that name. */
    public @Nullable String header(String name) {
        return headers.get(name);
    }

    /** The body as UTF-8 text, or null for a tombstone. */
    public @Nullable String text() {
        return body == null ? null : new String(body, StandardCharsets.UTF_8);
    }

    /** The key as UTF-8 text, or null when there is none. */
    public @Nullable String keyText() {
        return key == null ? null : new String(key, StandardCharsets.UTF_8);
    }

    /** The broker's own message, as {@code type}. @throws ClassCastException for another broker's type */
    public <S> S source(Class<S> type) {
        return type.cast(source);
    }
}
