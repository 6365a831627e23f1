package dev.idem.core;

/**
 * Thrown when the business check's own store (e.g. the JDBC ledger's table, written in the
 * handler's transaction) cannot be read or written: infrastructure trouble about which nothing is
 * known, so the delivery is deferred without the {@code maxDeferral} bound, never counted. Thread-safe.
 */
public class CheckUnavailableException extends InfrastructureException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what was unavailable
     * @param cause   the underlying error
     */
    public CheckUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
