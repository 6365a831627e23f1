package dev.idem.sample.inventory;

import dev.idem.core.NonRetryableException;

/**
 * A business rejection: an unknown SKU or not enough stock. Retrying cannot help, so Idem sends the
 * order straight to the dead letter (a {@link NonRetryableException}) and the compensation refunds it.
 */
public final class Rejection extends NonRetryableException {

    private static final long serialVersionUID = 1L;

    Rejection(String message) {
        super(message);
    }
}
