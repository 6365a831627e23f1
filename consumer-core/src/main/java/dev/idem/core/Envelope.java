package dev.idem.core;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A message as the broker delivered it, before Idem decodes it: what adapters hand to the
 * processor. Immutable; the body array is not copied, so callers must not change it.
 *
 * @param topic         topic
 * @param partition     Kafka partition or RocketMQ queue id; -1 where there is none
 * @param position      Kafka offset or RocketMQ queue offset, as text
 * @param messageId     the broker's id, stable across redeliveries (Kafka: {@code topic-partition@offset};
 *                      RocketMQ: the unique client id)
 * @param brokerAttempt the broker's own delivery count (RocketMQ {@code reconsumeTimes + 1}); 0 where unknown
 * @param headers       headers or user properties, as text by {@link KeyText#headerText(byte[])}: the
 *                      value itself when it is UTF-8 text, else {@code b64:} and its Base64
 * @param body          raw payload bytes
 * @param messageKey    the broker's message key (Kafka record key, RocketMQ keys) as bytes, or null
 * @param timestamp     the broker's timestamp of the message (Kafka record timestamp, RocketMQ born
 *                      time), or null where unknown
 * @param source        the broker's own message object ({@code ConsumerRecord}, {@code MessageExt}),
 *                      opaque to the core, or null; adapters and handlers read it with {@link #source(Class)}
 */
public record Envelope(String topic, int partition, String position, String messageId, int brokerAttempt,
                       Map<String, String> headers, byte[] body, byte @Nullable [] messageKey,
                       @Nullable Instant timestamp, @Nullable Object source) {

    /** An envelope without a message key, timestamp or native message (tests, hand-made messages). */
    public Envelope(String topic, int partition, String position, String messageId, int brokerAttempt,
                    Map<String, String> headers, byte[] body) {
        this(topic, partition, position, messageId, brokerAttempt, headers, body, null, null, null);
    }

    /** An envelope with a message key but no timestamp or native message. */
    public Envelope(String topic, int partition, String position, String messageId, int brokerAttempt,
                    Map<String, String> headers, byte[] body, byte @Nullable [] messageKey) {
        this(topic, partition, position, messageId, brokerAttempt, headers, body, messageKey, null, null);
    }

    /**
     * The broker's own message, if it is of {@code type}: e.g. {@code envelope.source(ConsumerRecord.class)}
     * in a Kafka handler.
     */
    public <S> Optional<S> source(Class<S> type) {
        return type.isInstance(source) ? Optional.of(type.cast(source)) : Optional.empty();
    }

    /** @throws NullPointerException if topic, position, messageId, headers or body is null */
    public Envelope {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(position, "position");
        Objects.requireNonNull(messageId, "messageId");
        headers = Map.copyOf(headers);
        Objects.requireNonNull(body, "body");
        if (brokerAttempt < 0) {
            throw new IllegalArgumentException("brokerAttempt must be >= 0 but was " + brokerAttempt);
        }
    }
}
