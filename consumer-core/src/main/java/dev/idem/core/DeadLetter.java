package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A message on its way to the dead-letter topic, with why it got there. Immutable.
 *
 * @param key              idempotency key
 * @param fence            fencing token of the claim that dead-lettered the key (0 when unknown, as
 *                         in a letter read back from its topic without Idem's headers)
 * @param envelope         the original message
 * @param attempts         handler attempts made
 * @param reason           why it was dead-lettered ("attempts exhausted", "undecodable payload", ...)
 * @param exceptionClass   class of the last failure, empty when there was none
 * @param exceptionMessage message of the last failure, bounded
 * @param stackTrace       stack trace of the last failure, bounded
 * @param firstFailureAt   when the first failure was recorded
 * @param lastFailureAt    when the last failure happened
 * @param traceParent      the failing run's trace context as a W3C {@code traceparent}, empty when it
 *                         was not traced
 */
public record DeadLetter(IdempotencyKey key, long fence, Envelope envelope, int attempts, String reason,
                         String exceptionClass, String exceptionMessage, String stackTrace,
                         Instant firstFailureAt, Instant lastFailureAt, String traceParent) {

    /** A dead letter of a run that was not traced. */
    public DeadLetter(IdempotencyKey key, long fence, Envelope envelope, int attempts, String reason,
                      String exceptionClass, String exceptionMessage, String stackTrace,
                      Instant firstFailureAt, Instant lastFailureAt) {
        this(key, fence, envelope, attempts, reason, exceptionClass, exceptionMessage, stackTrace, firstFailureAt,
                lastFailureAt, "");
    }

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
        Objects.requireNonNull(traceParent, "traceParent");
    }

    /**
     * Names this dead-lettering of the key: the same on every run of its compensation, a run taken
     * over after a crash included, and another for a later dead-lettering of the same key (after a
     * replay, say). A hook whose effect is outside the ledger's transaction (an email, a call to a
     * payment provider) dedupes on it: its hook can run twice when its process dies between the
     * hook's return and the record of its outcome. 32 hexadecimal digits (128 bits of a SHA-256
     * of the key and the fence).
     */
    public String compensationId() {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        for (String part : new String[] {key.group(), key.topic(), key.value(), Long.toString(fence)}) {
            sha.update(part.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
        }
        return HexFormat.of().formatHex(sha.digest(), 0, 16);
    }

    /** Which cause this letter belongs to, by its failure's class and the application frame it failed in. */
    public FailureGroup failureGroup() {
        return FailureGroup.of(exceptionClass, stackTrace, reason);
    }

    /**
     * Idem's own headers ({@link DeadLetterHeaders}), one contract for both brokers: original topic,
     * partition, offset and message id, consumer group, idempotency key, compensation id, attempts,
     * reason, exception class, message and bounded stack trace, first and last failure time, the
     * failure group and site, and the failing run's trace context. A header with no value (no exception, say)
     * is left out, never sent blank: RocketMQ refuses blank properties.
     */
    public Map<String, String> idemHeaders() {
        Map<String, String> headers = new LinkedHashMap<>();
        put(headers, DeadLetterHeaders.ORIGINAL_TOPIC, envelope.topic());
        put(headers, DeadLetterHeaders.ORIGINAL_PARTITION, Integer.toString(envelope.partition()));
        put(headers, DeadLetterHeaders.ORIGINAL_OFFSET, envelope.position());
        put(headers, DeadLetterHeaders.ORIGINAL_MESSAGE_ID, envelope.messageId());
        put(headers, DeadLetterHeaders.CONSUMER_GROUP, key.group());
        put(headers, DeadLetterHeaders.IDEMPOTENCY_KEY, key.value());
        put(headers, DeadLetterHeaders.COMPENSATION_ID, compensationId());
        put(headers, DeadLetterHeaders.ATTEMPTS, Integer.toString(attempts));
        put(headers, DeadLetterHeaders.REASON, reason);
        put(headers, DeadLetterHeaders.EXCEPTION_CLASS, exceptionClass);
        put(headers, DeadLetterHeaders.EXCEPTION_MESSAGE, exceptionMessage);
        put(headers, DeadLetterHeaders.EXCEPTION_STACKTRACE, stackTrace);
        put(headers, DeadLetterHeaders.FIRST_FAILURE_AT, firstFailureAt.toString());
        put(headers, DeadLetterHeaders.LAST_FAILURE_AT, lastFailureAt.toString());
        FailureGroup group = failureGroup();
        put(headers, DeadLetterHeaders.FAILURE_GROUP, group.fingerprint());
        put(headers, DeadLetterHeaders.FAILURE_SITE, group.site());
        put(headers, DeadLetterHeaders.TRACE_PARENT, traceParent);
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
            if (!DeadLetterHeaders.isIdemHeader(name) && value != null && !value.isBlank()) {
                headers.put(name, value);
            }
        });
        headers.putAll(idemHeaders());
        return headers;
    }

    private static void put(Map<String, String> headers, String name, String value) {
        if (value != null && !value.isBlank()) {
            headers.put(name, value);
        }
    }
}
