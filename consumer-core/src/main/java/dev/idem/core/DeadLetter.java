package dev.idem.core;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A message on its way to the dead-letter topic, with why it got there. Immutable.
 *
 * @param key              idempotency key
 * @param envelope         the original message
 * @param attempts         handler attempts made
 * @param reason           why it was dead-lettered ("attempts exhausted", "undecodable payload", ...)
 * @param exceptionClass   class of the last failure, empty when there was none
 * @param exceptionMessage message of the last failure, bounded
 * @param stackTrace       stack trace of the last failure, bounded
 * @param firstFailureAt   when the first failure was recorded
 * @param lastFailureAt    when the last failure happened
 */
public record DeadLetter(IdempotencyKey key, Envelope envelope, int attempts, String reason,
                         String exceptionClass, String exceptionMessage, String stackTrace,
                         Instant firstFailureAt, Instant lastFailureAt) {

    /** Prefix of every header Idem writes; both brokers use the same names. */
    public static final String HEADER_PREFIX = "idem-";

    /** @throws NullPointerException if a field is null */
    public DeadLetter {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(envelope, "envelope");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(exceptionClass, "exceptionClass");
        Objects.requireNonNull(exceptionMessage, "exceptionMessage");
        Objects.requireNonNull(stackTrace, "stackTrace");
        Objects.requireNonNull(firstFailureAt, "firstFailureAt");
        Objects.requireNonNull(lastFailureAt, "lastFailureAt");
    }

    /**
     * Idem's own headers, one contract for both brokers: original topic, partition, offset and
     * message id, consumer group, idempotency key, attempts, reason, exception class, message and
     * bounded stack trace, first and last failure time. A header with no value (no exception, say)
     * is left out, never sent blank: RocketMQ refuses blank properties.
     */
    public Map<String, String> idemHeaders() {
        Map<String, String> headers = new LinkedHashMap<>();
        put(headers, "original-topic", envelope.topic());
        put(headers, "original-partition", Integer.toString(envelope.partition()));
        put(headers, "original-offset", envelope.position());
        put(headers, "original-message-id", envelope.messageId());
        put(headers, "consumer-group", key.group());
        put(headers, "idempotency-key", key.value());
        put(headers, "attempts", Integer.toString(attempts));
        put(headers, "reason", reason);
        put(headers, "exception-class", exceptionClass);
        put(headers, "exception-message", exceptionMessage);
        put(headers, "exception-stacktrace", stackTrace);
        put(headers, "first-failure-at", firstFailureAt.toString());
        put(headers, "last-failure-at", lastFailureAt.toString());
        return headers;
    }

    /**
     * The original message's headers as text, without earlier {@code idem-} ones and without blank
     * values, then {@link #idemHeaders()}: a message dead-lettered again carries one set, the newest.
     * Publishers that can copy the original headers byte for byte from the native message
     * ({@link Envelope#source(Class)}) use {@link #idemHeaders()} alone on top of those.
     */
    public Map<String, String> headers() {
        Map<String, String> headers = new LinkedHashMap<>();
        envelope.headers().forEach((name, value) -> {
            if (!isIdemHeader(name) && value != null && !value.isBlank()) {
                headers.put(name, value);
            }
        });
        headers.putAll(idemHeaders());
        return headers;
    }

    /** Whether {@code name} is one of Idem's headers, replaced when a message is dead-lettered again. */
    public static boolean isIdemHeader(String name) {
        return name.startsWith(HEADER_PREFIX);
    }

    private static void put(Map<String, String> headers, String name, String value) {
        if (value != null && !value.isBlank()) {
            headers.put(HEADER_PREFIX + name, value);
        }
    }
}
