package dev.idem.core.outbox;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A message to send through the outbox: its destination (a Kafka or RocketMQ topic), key, value and
 * headers, and optionally its own id. Immutable: each setter returns a copy.
 *
 * <pre>{@code
 * OutboxMessage.to("stock-reserved").key(order.sku()).value(json).header("type", "StockReserved")
 * }</pre>
 */
public final class OutboxMessage {

    /** Kafka's longest topic name; RocketMQ's are shorter. */
    public static final int MAX_DESTINATION_LENGTH = 249;
    /** The key column's width. */
    public static final int MAX_KEY_LENGTH = 512;
    /** The id column's width. */
    public static final int MAX_ID_LENGTH = 255;

    private final String destination;
    private final @Nullable String key;
    private final byte @Nullable [] value;
    private final Map<String, String> headers;
    private final @Nullable String id;

    private OutboxMessage(String destination, @Nullable String key, byte @Nullable [] value,
                          Map<String, String> headers, @Nullable String id) {
        this.destination = destination;
        this.key = key;
        this.value = value;
        this.headers = headers;
        this.id = id;
    }

    /** A message for {@code destination}, with no key, value or headers yet. */
    public static OutboxMessage to(String destination) {
        Objects.requireNonNull(destination, "destination");
        if (destination.isBlank() || destination.length() > MAX_DESTINATION_LENGTH) {
            throw new IllegalArgumentException("destination must be 1 to " + MAX_DESTINATION_LENGTH
                    + " characters but was '" + destination + "'");
        }
        return new OutboxMessage(destination, null, null, Map.of(), null);
    }

    /** The message key (Kafka's record key in UTF-8, RocketMQ's keys): messages with one key keep their order. */
    public OutboxMessage key(String key) {
        Objects.requireNonNull(key, "key");
        if (key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key must be at most " + MAX_KEY_LENGTH + " characters but was "
                    + key.length());
        }
        return new OutboxMessage(destination, key, value, headers, id);
    }

    /** The value, as it is published. */
    public OutboxMessage value(byte[] value) {
        return new OutboxMessage(destination, key, Objects.requireNonNull(value, "value").clone(), headers, id);
    }

    /** The value as UTF-8 text (e.g. JSON). */
    public OutboxMessage value(String text) {
        return new OutboxMessage(destination, key, text.getBytes(StandardCharsets.UTF_8), headers, id);
    }

    /** A header; Idem's own ({@link OutboxHeaders}) are set by the outbox and cannot be given. */
    public OutboxMessage header(String name, String text) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(text, "text");
        if (name.equals(OutboxHeaders.MESSAGE_ID) || name.equals(OutboxHeaders.TRACE_PARENT)) {
            throw new IllegalArgumentException("header '" + name + "' is set by the outbox");
        }
        Map<String, String> copy = new LinkedHashMap<>(headers);
        copy.put(name, text);
        return new OutboxMessage(destination, key, value, Collections.unmodifiableMap(copy), id);
    }

    /**
     * Its id, when the application has a stable one (an event id it stores): by default a message
     * sent from a handler gets an id derived from the incoming message and the send's place in the
     * run, and one sent outside a handler a random id.
     */
    public OutboxMessage id(String id) {
        Objects.requireNonNull(id, "id");
        if (id.isBlank() || id.length() > MAX_ID_LENGTH) {
            throw new IllegalArgumentException("id must be 1 to " + MAX_ID_LENGTH + " characters but was '" + id + "'");
        }
        return new OutboxMessage(destination, key, value, headers, id);
    }

    public String destination() {
        return destination;
    }

    public @Nullable String key() {
        return key;
    }

    /** The value (a copy), or null when none was given (a tombstone on Kafka). */
    public byte @Nullable [] value() {
        return value == null ? null : value.clone();
    }

    byte @Nullable [] valueShared() {
        return value;
    }

    public Map<String, String> headers() {
        return headers;
    }

    public @Nullable String id() {
        return id;
    }

    @Override
    public String toString() {
        return "OutboxMessage[" + destination + (key != null ? ", key " + key : "") + (id != null ? ", id " + id : "") + "]";
    }
}
