package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Claim records with owner tokens and leases, as the processor uses them (docs/design.md, "The
 * claim record"). Every change is atomic and succeeds only for the current owner token. Batch
 * methods take one round trip per store node. Implementations are thread-safe and throw
 * {@link ClaimStoreException} when the store cannot be reached. The operator side is
 * {@link ClaimAdmin}.
 */
public interface ClaimStore {

    /** How long done and dead-lettered keys are remembered (the dedup window). */
    Duration doneWindow();

    /** How long attempt and failure counts are kept; retries must fit in it. */
    Duration attemptsWindow();

    /**
     * This store as a guarded processor uses it, one whose business check is an
     * {@link dev.idem.core.EffectLedger} (it remembers effects and dead letters, as the JDBC ledger
     * does): a view that may keep done and dead keys for a shorter window, since the ledger, not the
     * store, keeps both single beyond it (a copy arriving later costs one query of the ledger). The
     * processor asks for it at build. A store that wraps another must wrap this view too. Default:
     * empty, the store itself serves both modes.
     */
    default Optional<ClaimStore> guarded() {
        return Optional.empty();
    }

    /**
     * Claims keys for {@code owner}, each attempt uncounted (see {@link Claim.Claimed}). A key held
     * by {@code owner} already is claimed again (re-entrant: a retry after a client timeout), with its
     * lease extended.
     *
     * @return one answer per request, in order
     */
    List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease);

    /**
     * Counts the attempt of an uncounted claim right before its handler runs, so that a process crash
     * in the handler is counted, and renews its lease by {@code lease}: a claim whose lease ended
     * but that nobody took over is still {@code owner}'s, and nobody can take it after this.
     *
     * @return false if {@code owner} no longer holds the key
     */
    boolean count(IdempotencyKey key, String owner, Duration lease);

    /**
     * Extends the leases of claims and compensations {@code owner} holds.
     *
     * @return the keys whose lease was lost (no longer held by {@code owner})
     */
    Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease);

    /**
     * {@link #renew} without blocking the caller: the future holds the lost keys, or fails with
     * {@link ClaimStoreException}. Stores that cannot do better renew synchronously.
     */
    default CompletableFuture<Set<IdempotencyKey>> renewAsync(Collection<IdempotencyKey> keys, String owner,
                                                             Duration lease) {
        try {
            return CompletableFuture.completedFuture(renew(keys, owner, lease));
        } catch (ClaimStoreException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Marks keys done, kept for the dedup window. A key done already is not refused (a completion
     * sent again after its reply was lost), nor is a key with no record: {@code owner} applied its
     * effect and the store lost the record under it (a failover, a restart), so it is written done,
     * or a copy would run again. A key another owner holds, a dead-lettered one, or one an operator
     * reset since ({@link ClaimAdmin#reset}) is refused and left as it is.
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
     * without counting anything. A held compensation ({@link Claim.Compensate}) never started is
     * given up the same way: the key stays dead-lettered, and the next claim takes its compensation
     * over at once instead of after this owner's lease.
     */
    default void release(Collection<IdempotencyKey> keys, String owner) {
        release(keys, Set.of(), owner);
    }

    /**
     * As {@link #release(Collection, String)}, except that each of {@code crashed} (claims taken over
     * from an abandoned owner) is left abandoned, as its crashed owner left it: no owner, its lease
     * ended, nothing counted (a count made for this claim, whose handler never started, is taken
     * back). The next claim takes it over ({@link Claim.Claimed#abandoned()}) and counts its own run
     * before it starts ({@link #count}). So a consumer giving such a claim up unrun
     * (a poll claimed ahead, then a rebalance) neither erases a crash (a plain release would make the
     * next run an uncounted first one) nor counts one for a run that never started (the crashed owner
     * may only have held the key in a poll it never began): attempts count handler runs. One step per
     * key; a failed call leaves the claim to lapse, with the same effect.
     */
    void release(Collection<IdempotencyKey> keys, Set<IdempotencyKey> crashed, String owner);

    /**
     * Records, before the dead letter is published, that the key is to be dead-lettered: from now on
     * whoever claims it publishes the dead letter with this reason and never runs the handler. Counts
     * the attempt, and the failure when {@code error} is not empty. A key doomed already keeps its
     * first reason and error.
     *
     * @return false if {@code owner} no longer holds the key
     */
    boolean doom(IdempotencyKey key, String owner, String reason, String error);

    /**
     * The dead letter of a doomed key could not be published: releases the claim, and the key may
     * be claimed again only after {@code delay}, however many copies of the message arrive.
     *
     * @return false if {@code owner} no longer holds the key
     */
    boolean postpone(IdempotencyKey key, String owner, Duration delay);

    /**
     * Marks a doomed key dead-lettered, kept for the dead window, with its compensation pending and
     * held by {@code owner} for {@code compensationLease}; a later claim after that lease takes the
     * compensation over ({@link Claim.Compensate}).
     *
     * @return false if {@code owner} no longer held the key
     */
    boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease);

    /**
     * As {@link #deadLetter(IdempotencyKey, String, Duration)}, with the dead-lettering named by
     * {@code fence} instead of the claim's own: a compensation recovered after the store lost the
     * key's record keeps the fence the business check recorded with the dead letter, so a takeover of
     * it after a crash reads that fence here and the compensation keeps its id
     * ({@link dev.idem.core.DeadLetter#compensationId()}). A store must keep the fence given.
     *
     * @return false if {@code owner} no longer held the key
     */
    boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease, long fence);

    /**
     * Records the outcome of a compensation {@code owner} holds ({@link CompensationOutcome#OK} or a failure).
     *
     * @return false if the compensation passed to another owner, or its outcome is recorded already
     */
    boolean recordCompensation(IdempotencyKey key, String owner, CompensationOutcome outcome);
}
