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
     * The dead letter's headers (Kafka headers, RocketMQ user properties): the original message's
     * own headers without earlier {@code idem-} ones, then Idem's, so a message dead-lettered again
     * carries one set, the newest.
     */
    public Map<String, String> headers() {
        Map<String, String> headers = new LinkedHashMap<>();
        envelope.headers().forEach((name, value) -> {
            if (!name.startsWith(HEADER_PREFIX)) {
                headers.put(name, value);
            }
        });
        headers.put(HEADER_PREFIX + "original-topic", envelope.topic());
        headers.put(HEADER_PREFIX + "original-partition", Integer.toString(envelope.partition()));
        headers.put(HEADER_PREFIX + "original-offset", envelope.position());
        headers.put(HEADER_PREFIX + "original-message-id", envelope.messageId());
        headers.put(HEADER_PREFIX + "consumer-group", key.group());
        headers.put(HEADER_PREFIX + "idempotency-key", key.value());
        headers.put(HEADER_PREFIX + "attempts", Integer.toString(attempts));
        headers.put(HEADER_PREFIX + "reason", reason);
        headers.put(HEADER_PREFIX + "exception-class", exceptionClass);
        headers.put(HEADER_PREFIX + "exception-message", exceptionMessage);
        headers.put(HEADER_PREFIX + "exception-stacktrace", stackTrace);
        headers.put(HEADER_PREFIX + "first-failure-at", firstFailureAt.toString());
        headers.put(HEADER_PREFIX + "last-failure-at", lastFailureAt.toString());
        return headers;
    }
}
