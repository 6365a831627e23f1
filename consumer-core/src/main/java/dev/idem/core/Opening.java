package dev.idem.core;

import org.jspecify.annotations.Nullable;
import dev.idem.core.spi.Claim;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A batch of this processor from the moment its claim is sent until it has closed and its
 * completion landed: the keys it asked for, its place in the order batches began, and what
 * completes when it settles. Lets a claim that meets one of these keys busy tell its own batches
 * from others' ({@link Completions#claimAgainAfterOwnCompletions}).
 */
final class Opening {

    final long order;
    final Set<IdempotencyKey> keys;
    final CompletableFuture<Void> settled = new CompletableFuture<>();
    // The batch's claims once they answered (null before): a key it asked for may be held elsewhere.
    volatile @Nullable Round<?> round;
    // The keys it met busy, held by another batch here, and watches until it closes (HeldHere)...
    volatile Set<IdempotencyKey> watching = Set.of();
    // ...and those of them a completion here confirmed done since.
    final Set<IdempotencyKey> confirmed = ConcurrentHashMap.newKeySet();

    Opening(long order, Set<IdempotencyKey> keys) {
        this.order = order;
        this.keys = keys;
    }

    /** Whether this batch holds the key, or may (its claim has not answered yet, or asks again). */
    boolean mayHold(IdempotencyKey key) {
        if (!keys.contains(key)) {
            return false;
        }
        Round<?> opened = round;
        if (opened == null) {
            return true;
        }
        Claim claim = opened.claims.get(key);
        return claim != null && claim.held() || opened.askAgain.contains(key);
    }
}
