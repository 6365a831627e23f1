package dev.idem.core.outbox;

/** The headers every message published from the outbox carries; a contract with downstream consumers. */
public final class OutboxHeaders {

    /**
     * The message's outbox id: the same on every re-run of the handler that sent it, and on every
     * publication of its row, so a consumer dedups on it ({@code KeySource.outboxId()}).
     */
    public static final String MESSAGE_ID = "idem-message-id";

    /** The sending run's trace context (W3C), so the trace continues into the next service. */
    public static final String TRACE_PARENT = "traceparent";

    private OutboxHeaders() {
    }
}
