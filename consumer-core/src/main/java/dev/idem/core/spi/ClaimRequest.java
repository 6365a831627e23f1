package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.util.Objects;

/**
 * One key to claim.
 *
 * @param key          the key
 * @param attemptFloor the broker's own delivery count, used as the attempt count only when the
 *                     store has no record of the key (it was lost); 0 when the broker keeps none
 */
public record ClaimRequest(IdempotencyKey key, int attemptFloor) {

    /** @throws IllegalArgumentException if attemptFloor is negative */
    public ClaimRequest {
        Objects.requireNonNull(key, "key");
        if (attemptFloor < 0) {
            throw new IllegalArgumentException("attemptFloor must be >= 0 but was " + attemptFloor);
        }
    }
}
