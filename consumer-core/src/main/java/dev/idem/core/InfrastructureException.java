package dev.idem.core;

/**
 * Thrown by a handler (or by Idem's own ledger) when infrastructure it depends on is unavailable:
 * the database, a remote service. Not the message's fault: the delivery is deferred (not
 * acknowledged, not counted as an attempt, retried after a backoff) for up to
 * {@code IdempotentProcessor.Builder#maxDeferral}, then counted like any failure. Transient
 * and connection {@code SQLException}s and refused connections are treated the same way without
 * wrapping; list further classes with {@code IdempotentProcessor.Builder#infrastructure}.
 */
public class InfrastructureException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message what was unavailable */
    public InfrastructureException(String message) {
        super(message);
    }

    /**
     * @param message what was unavailable
     * @param cause   the underlying error
     */
    public InfrastructureException(String message, Throwable cause) {
        super(message, cause);
    }
}
