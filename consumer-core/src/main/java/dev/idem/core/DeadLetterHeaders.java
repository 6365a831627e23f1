package dev.idem.core;

/**
 * The names of the headers Idem writes on a dead letter (Kafka headers, RocketMQ user properties):
 * one contract for both brokers, for the publishers that write them and the tools that read them
 * back. Every name starts with {@link #PREFIX}.
 */
public final class DeadLetterHeaders {

    /** Prefix of every header Idem writes; earlier ones are replaced when a message is dead-lettered again. */
    public static final String PREFIX = "idem-";
    /** The topic the message was consumed from. */
    public static final String ORIGINAL_TOPIC = PREFIX + "original-topic";
    /** Its partition (Kafka) or queue id (RocketMQ). */
    public static final String ORIGINAL_PARTITION = PREFIX + "original-partition";
    /** Its offset (Kafka) or queue offset (RocketMQ). */
    public static final String ORIGINAL_OFFSET = PREFIX + "original-offset";
    /** Its broker message id, where the broker has one (RocketMQ). */
    public static final String ORIGINAL_MESSAGE_ID = PREFIX + "original-message-id";
    /** The consumer group that dead-lettered it. */
    public static final String CONSUMER_GROUP = PREFIX + "consumer-group";
    /** Its idempotency key's text. */
    public static final String IDEMPOTENCY_KEY = PREFIX + "idempotency-key";
    /** {@link DeadLetter#compensationId()}: the same on every run of this dead-lettering's compensation. */
    public static final String COMPENSATION_ID = PREFIX + "compensation-id";
    /** Handler attempts made. */
    public static final String ATTEMPTS = PREFIX + "attempts";
    /** Why it was dead-lettered ("attempts exhausted", "undecodable payload", ...). */
    public static final String REASON = PREFIX + "reason";
    /** Class of the last failure; absent when there was none. */
    public static final String EXCEPTION_CLASS = PREFIX + "exception-class";
    /** Message of the last failure, bounded. */
    public static final String EXCEPTION_MESSAGE = PREFIX + "exception-message";
    /** Stack trace of the last failure, bounded. */
    public static final String EXCEPTION_STACKTRACE = PREFIX + "exception-stacktrace";
    /** When the first failure was recorded (ISO-8601). */
    public static final String FIRST_FAILURE_AT = PREFIX + "first-failure-at";
    /** When the last failure happened (ISO-8601). */
    public static final String LAST_FAILURE_AT = PREFIX + "last-failure-at";

    /** {@link FailureGroup#fingerprint()}: the letter's cause, as {@code idem dlq list --groups} groups them. */
    public static final String FAILURE_GROUP = PREFIX + "failure-group";
    /** {@link FailureGroup#site()}: the first frame of the application's code in the stack trace, where there is one. */
    public static final String FAILURE_SITE = PREFIX + "failure-site";
    /**
     * The failing run's trace context as a W3C {@code traceparent}, where it was traced: a trace
     * backend finds the run that dead-lettered the message by it, and {@code idem dlq show} prints it.
     */
    public static final String TRACE_PARENT = PREFIX + "traceparent";
    /**
     * On a replayed message: the {@link #TRACE_PARENT} of the run that dead-lettered it, so the
     * replayed run links back to it (written by {@code idem dlq replay}).
     */
    public static final String REPLAY_OF = PREFIX + "replay-of";

    private DeadLetterHeaders() {
    }

    /** Whether {@code name} is one of Idem's headers. */
    public static boolean isIdemHeader(String name) {
        return name.startsWith(PREFIX);
    }
}
