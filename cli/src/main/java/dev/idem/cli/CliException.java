package dev.idem.cli;

import org.jspecify.annotations.Nullable;

/**
 * An operator error the command reports in one line with exit code 2: bad input, an unknown topic,
 * a broker or Redis that cannot be reached. The cause's stack trace is shown only with
 * {@code --verbose}.
 */
public final class CliException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** An error with no cause. */
    public CliException(String message) {
        super(message);
    }

    /** An error caused by {@code cause}. */
    public CliException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
