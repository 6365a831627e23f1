package dev.idem.core;

/**
 * Thrown by a handler when retrying cannot help (a business rule rejects the message): the message
 * goes to the dead letter at once, without further attempts.
 */
public class NonRetryableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message why the message cannot be processed */
    public NonRetryableException(String message) {
        super(message);
    }

    /**
     * @param message why the message cannot be processed
     * @param cause   the underlying failure
     */
    public NonRetryableException(String message, Throwable cause) {
        super(message, cause);
    }
}
