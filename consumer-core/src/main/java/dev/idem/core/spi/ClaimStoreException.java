package dev.idem.core.spi;

import org.jspecify.annotations.Nullable;

/**
 * The claim store could not be reached or did not answer. The processor fails closed: nothing is
 * acknowledged and the message is redelivered later.
 */
public class ClaimStoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause   the client's error
     */
    public ClaimStoreException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
