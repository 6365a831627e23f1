package dev.idem.core;

/**
 * Thrown when the system of record refuses an effect because it already exists (a unique key, a
 * ledger row, a state-machine guard). The processor treats it as "already applied": the outcome is
 * {@link Outcome.Duplicate}, not a failure.
 */
public class DuplicateEffectException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what already exists
     * @param cause   the refusal, e.g. a unique-key violation
     */
    public DuplicateEffectException(String message, Throwable cause) {
        super(message, cause);
    }
}
