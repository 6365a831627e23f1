package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Claim records with owner tokens and leases (DESIGN §3). Every change is atomic and, except
 * {@link #reset} and {@link #recordCompensation}, succeeds only for the current owner token.
 * Batch methods take one round trip per store node. Implementations are thread-safe and throw
 * {@link ClaimStoreException} when the store cannot be reached.
 */
public interface ClaimStore {

    /**
     * Claims keys for {@code owner}. A key held by {@code owner} already is claimed again
     * (re-entrant: a retry after a client timeout), with its lease extended.
     *
     * @param firm true to count the attempt now (the handler runs next); false for a tentative claim
     *             taken ahead of time, counted only once its outcome is known (see {@link #start})
     * @return one answer per request, in order
     */
    List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease, boolean firm);

    /**
     * Firms a tentative claim right before its handler starts, counting the attempt, so that a
     * process crash in the handler is counted.
     *
     * @return false if {@code owner} no longer holds the key
     */
    boolean start(IdempotencyKey key, String owner);

    /**
     * Extends the leases of keys {@code owner} holds.
     *
     * @return the keys whose lease was lost (no longer held by {@code owner})
     */
    Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease);

    /**
     * Marks keys done, kept for the dedup window.
     *
     * @return the keys {@code owner} no longer held (completion refused)
     */
    Set<IdempotencyKey> complete(Collection<IdempotencyKey> keys, String owner);

    /**
     * {@link #complete} without waiting for the store: the future holds the refused keys, or fails
     * with {@link ClaimStoreException}. Stores that cannot do better complete synchronously.
     */
    default CompletableFuture<Set<IdempotencyKey>> completeAsync(Collection<IdempotencyKey> keys, String owner) {
        try {
            return CompletableFuture.completedFuture(complete(keys, owner));
        } catch (ClaimStoreException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Records a handler failure and releases the claim so the redelivery can claim again.
     *
     * @param error class and message of the failure, bounded by the caller
     * @return the counts after this failure, or empty if {@code owner} no longer held the key
     */
    Optional<FailureCount> fail(IdempotencyKey key, String owner, String error);

    /**
     * Releases claims whose handler never started (the consumer is closing or losing partitions),
     * without counting anything.
     */
    void release(Collection<IdempotencyKey> keys, String owner);

    /**
     * Marks a key dead-lettered, kept for the dedup window, with compensation pending.
     *
     * @param error the last failure, or empty; counted as a failure when not empty
     * @return false if {@code owner} no longer held the key
     */
    boolean deadLetter(IdempotencyKey key, String owner, String error);

    /** Records the compensation outcome on a dead-lettered key. */
    void recordCompensation(IdempotencyKey key, String outcome);

    /** Forgets a key entirely, e.g. to replay a dead letter. */
    void reset(IdempotencyKey key);

    /** The record of a key, if any. */
    Optional<ClaimRecord> inspect(IdempotencyKey key);
}
