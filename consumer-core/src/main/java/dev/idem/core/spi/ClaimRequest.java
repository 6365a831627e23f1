package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One key to claim.
 *
 * @param key          the key
 * @param attemptFloor the broker's own delivery count (RocketMQ {@code reconsumeTimes + 1}); 0 when
 *                     the broker keeps none. The store uses it only for a key it has no record of,
 *                     and only where it may have lost that record (see {@code bornAt})
 * @param bornAt       when the broker received the message, or null if unknown: a store that has
 *                     kept its data since before then never lost the record, so the floor (which
 *                     also grows on Idem's own deferrals) is ignored
 */
public record ClaimRequest(IdempotencyKey key, int attemptFloor, @Nullable Instant bornAt) {

    /** A request with no born time. */
    public ClaimRequest(IdempotencyKey key, int attemptFloor) {
        this(key, attemptFloor, null);
    }

    /** @throws IllegalArgumentException if attemptFloor is negative */
    public ClaimRequest {
        Objects.requireNonNull(key, "key");
        if (attemptFloor < 0) {
            throw new IllegalArgumentException("attemptFloor must be >= 0 but was " + attemptFloor);
        }
    }
}
