package dev.idem.core;

import dev.idem.core.internal.Prepared;
import dev.idem.core.spi.Claim;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One message's run under its claim: the batch's round, the prepared message, the claim it runs
 * under and, for a message that decoded, its delivery; the values that travel through the steps
 * together. Made once the claim is ours; immutable.
 *
 * @param <T> payload type
 */
final class Attempt<T> {

    final Round<T> round;
    final Prepared<T> item;
    final Claim.Claimed claimed;
    private final @Nullable Delivery<T> delivery;

    Attempt(Round<T> round, Prepared<T> item, Claim.Claimed claimed) {
        this.round = round;
        this.item = item;
        this.claimed = claimed;
        // A message with a defect (no key's payload, undecodable) never reaches the handler.
        this.delivery = item.defect() != null ? null : new Delivery<>(item.key(), claimed.fence(), claimed.attempt(),
                item.envelope(), Objects.requireNonNull(item.payload(), "a message without a defect is decoded"));
    }

    IdempotencyKey key() {
        return item.key();
    }

    /** The delivery handed to the check and the handler. */
    Delivery<T> delivery() {
        return Objects.requireNonNull(delivery, "a message with a defect has no delivery");
    }
}
