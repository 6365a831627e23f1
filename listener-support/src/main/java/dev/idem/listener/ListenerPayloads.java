package dev.idem.listener;

import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import java.util.Optional;
import java.util.function.Function;

/**
 * How a listener's payload is decoded and keyed, the rules both integrations' annotations share: a
 * {@code String} or {@code byte[]} parameter takes the message as it is (any other type is the
 * framework's JSON); the key comes from the message key, its id, a header or a payload property, with
 * an optional suffix.
 */
public final class ListenerPayloads {

    private ListenerPayloads() {
    }

    /** The codec of a {@code String} (UTF-8) or {@code byte[]} parameter; empty for any other type. */
    @SuppressWarnings("unchecked")
    public static Optional<PayloadCodec<Object>> plainCodec(Class<?> type) {
        if (String.class.equals(type)) {
            return Optional.of((PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.utf8());
        }
        if (byte[].class.equals(type)) {
            return Optional.of((PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.bytes());
        }
        return Optional.empty();
    }

    /**
     * The key source an annotation declares.
     *
     * @param from        the annotation's {@code keySource}: {@code MESSAGE_KEY}, {@code MESSAGE_ID},
     *                    {@code OUTBOX_ID}, {@code HEADER} or {@code PROPERTY}, by name
     * @param key         the header's name, or the payload's property path
     * @param suffix      appended to every key, or empty
     * @param where       the annotation and its method, for messages ({@code @IdempotentListener on a.B.c})
     * @param payloadType the payload parameter's simple name, for messages
     * @param property    the framework's reader of a payload property path
     * @throws IllegalArgumentException naming {@code where} when the key is missing or the property unknown
     */
    public static KeySource<Object> keys(Enum<?> from, String key, String suffix, String where, String payloadType,
                                         Function<String, KeySource<Object>> property) {
        KeySource<Object> source = switch (from.name()) {
            case "MESSAGE_KEY" -> KeySource.messageKey();
            case "MESSAGE_ID" -> KeySource.messageId();
            case "OUTBOX_ID" -> KeySource.outboxId();
            case "HEADER" -> {
                if (key.isBlank()) {
                    throw new IllegalArgumentException(where + ": keySource = HEADER needs key = \"<header name>\"");
                }
                yield KeySource.header(key);
            }
            case "PROPERTY" -> {
                if (key.isBlank()) {
                    throw new IllegalArgumentException(where + " needs key = \"<property of " + payloadType
                            + ">\" (or another keySource)");
                }
                yield property.apply(key);
            }
            default -> throw new IllegalArgumentException(where + ": no key source " + from);
        };
        if (suffix.isEmpty()) {
            return source;
        }
        return (envelope, payload) -> {
            String value = source.keyOf(envelope, payload);
            return value == null ? null : value + suffix;
        };
    }
}
