package dev.idem.core;

import dev.idem.core.internal.Deferrals;
import dev.idem.core.internal.Failures;
import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Idem's fixed order, the whole of it, top to bottom (docs/design.md, "The processing order"):
 * <ol>
 *   <li>{@link #open}: decode each message and find its key, claim every key in one round trip,
 *       and hold the claims (their leases are renewed until the batch closes): {@link ClaimStep};</li>
 *   <li>{@link #run}, per message: read the claim's answer (2a, {@code answered}), stop a run that
 *       must not happen (2b, 2c, {@code beforeRun}), make sure the lease still holds (2d,
 *       {@code confirmLease}), run the business check (2e, {@code check}), run the handler (2f), then
 *       settle: done, or a failure's retry, deferral or dead letter ({@link HandlerStep},
 *       {@link FailureStep}, {@link DeadLetterStep}, each step's next move followed by
 *       {@code follow}), the message's {@link Attempt} travelling through them; what stops a trip
 *       short without failing it is {@link Setbacks};</li>
 *   <li>{@link #close}: release the claims of messages never started, and complete the finished keys
 *       in one round trip that is sent, not awaited ({@link Completions}, decision 0007).</li>
 * </ol>
 * Only these classes and the lease renewer call the {@link ClaimStore}; a batch's state is its
 * {@link Round}. Users cannot reorder the steps. Thread-safe.
 *
 * <p>Attempts are counted by the store, never here: a claim is uncounted until its outcome is
 * recorded ({@code fail}, {@code doom}); a claim taken over from an abandoned owner (a crash) is
 * counted with {@code count} before its handler runs, so a crash loop reaches the dead letter
 * (decision 0003).
 *
 * @param <T> payload type
 */
final class Protocol<T> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Protocol.class);

    private final EffectLedger<? super T> dedupCheck;
    // False when the handler itself refuses what the check would find (the ledger's insert comes first).
    private final boolean checkFirst;
    private final int maxAttempts;
    private final Duration lease;
    private final Deferrals deferrals;
    private final Failures failures;
    private final Clock clock;
    private final Meters meters;
    private final Tracing tracing;
    private final Consumer<Outcome> onOutcome;
    private final LeaseRenewer renewer;
    private final ClaimStep<T> claimStep;
    private final Setbacks<T> setbacks;
    private final DeadLetterStep<T> deadLetterStep;
    private final CheckStep<T> checkStep;
    private final HandlerStep<T> handlerStep;
    private final FailureStep<T> failureStep;
    private final HeldHere heldHere;
    private final Completions<T> completions;

    Protocol(ProcessorConfig<T> c, Meters meters, Tracing tracing) {
        this.dedupCheck = EffectLedger.of(c.dedupCheck());
        this.checkFirst = !dedupCheck.refusesDuplicates(c.handler());
        this.maxAttempts = c.maxAttempts();
        this.lease = c.lease();
        this.deferrals = new Deferrals(c.backoff().delay(64));
        this.failures = new Failures(c.fatal(), c.infrastructure());
        this.clock = c.clock();
        this.meters = meters;
        this.tracing = tracing;
        meters.oldestDeferral(() -> oldestDeferral().orElse(Duration.ZERO));
        this.onOutcome = c.onOutcome();
        this.renewer = new LeaseRenewer(c.claims(), c.lease(), meters, c.ticker()::nanos);
        this.setbacks = new Setbacks<>(c.claims(), deferrals, c.backoff(), failures, c.clock(), meters);
        this.deadLetterStep = new DeadLetterStep<>(c, dedupCheck, new CompensationRecords(dedupCheck), deferrals,
                setbacks, meters, tracing);
        this.checkStep = new CheckStep<>(dedupCheck, c.dedupCheck() != DedupCheck.none(), tracing);
        this.handlerStep = new HandlerStep<>(c, meters, tracing);
        this.failureStep = new FailureStep<>(c, c.claims(), failures, setbacks);
        this.heldHere = new HeldHere();
        this.completions = new Completions<>(c.claims(), renewer, meters, tracing, c.ticker(), heldHere);
        this.claimStep = new ClaimStep<>(new Preparation<>(c.group(), c.codec(), KeyTextSource.of(c.keys())),
                c.claims(), c.lease(), renewer, heldHere, meters, c.ticker());
    }

    /** How long the key deferred longest in a row here has been coming back deferred; empty when none is. */
    Optional<Duration> oldestDeferral() {
        Instant now = clock.instant();
        return deferrals.oldest(now).map(since -> Duration.between(since, now));
    }

    Duration lease() {
        return lease;
    }

    // ---- 1. Open: prepare, claim, hold ---------------------------------------------------------

    Round<T> open(List<Envelope> envelopes) {
        Tracing.Step span = tracing.claim(envelopes.size());
        try {
            Round<T> round = claimStep.open(envelopes, span);
            if (round.claimFailure != null) {
                span.failed(round.claimFailure);
            }
            return round;
        } finally {
            span.close();
        }
    }

    // ---- 2. Run one message --------------------------------------------------------------------

    Outcome run(Round<T> round, int index) {
        if (!round.lock.readLock().tryLock()) {
            throw new IllegalStateException("batch is closed");
        }
        try {
            if (round.closed) {
                throw new IllegalStateException("batch is closed");
            }
            Prepared<T> item = round.items.get(index);
            Tracing.Step span = tracing.message(item.envelope(), item.key(), round.claimSpan);
            try {
                Outcome outcome = runTraced(round, item);
                span.outcome(outcome);
                return outcome;
            } catch (RuntimeException | Error e) {
                span.failed(e);
                throw e;
            } finally {
                span.close();
            }
        } finally {
            round.lock.readLock().unlock();
        }
    }

    /** One message's run, under its span: the claim's answer, the checks, the handler, the settling. */
    private Outcome runTraced(Round<T> round, Prepared<T> item) {
        IdempotencyKey key = item.key();
        if (round.claimFailure != null) {
            return record(item, setbacks.deferred(item, "claim store unavailable", round.claimFailure));
        }
        Outcome copy = round.runOrAnswer(key);
        if (copy != null) {
            return record(item, copy);
        }
        // If the process cannot go on (an out-of-memory error escapes), the key is left as after a crash.
        Claim claim = null;
        Outcome outcome = null;
        RunLogContext.enter(key);
        try {
            claim = claimStep.claimOf(round, item);
            outcome = settle(round, item, claim);
        } finally {
            RunLogContext.leave();
            completions.stopped(round);
            round.settle(key, outcome);
        }
        if (claim instanceof Claim.Claimed && (outcome instanceof Outcome.Applied
                || outcome instanceof Outcome.Duplicate)) {
            // Still held (and renewed) until its completion is sent: a finished key must not
            // lapse and run again elsewhere while the rest of a long batch runs.
            completions.completeLater(round, key);
        } else {
            round.held.drop(key);
        }
        return record(item, outcome);
    }

    /** Steps 2a to 2f; each of 2b to 2e returns an outcome when the trip ends there, null to go on. */
    private Outcome settle(Round<T> round, Prepared<T> item, Claim claim) {
        if (!(claim instanceof Claim.Claimed claimed)) {
            return answered(round, item, claim);
        }
        RunLogContext.attempt(claimed.attempt());
        tracing.current().attribute("idem.attempt", claimed.attempt()).attribute("idem.fence", claimed.fence())
                .event("idem.claimed", "idem.claim", claimed.abandoned() ? "taken over" : claimed.fresh() ? "new" : "again");
        Attempt<T> a = new Attempt<>(round, item, claimed);
        Outcome early = beforeRun(a);
        if (early == null) {
            early = confirmLease(a);
        }
        if (early == null) {
            early = check(a);
        }
        // 2f. The handler, through the interceptor slot, while the lease is renewed.
        return early != null ? early : follow(a, handlerStep.run(a));
    }

    /** 2a. The claim's answer when it is not ours to run: settled earlier, someone else's, or unreadable. */
    private Outcome answered(Round<T> round, Prepared<T> item, Claim claim) {
        IdempotencyKey key = item.key();
        if (claim instanceof Claim.Done) {
            return new Outcome.Duplicate(key, "recorded as done in the claim store");
        }
        if (claim instanceof Claim.Dead) {
            return deadLetterStep.recordedDead(item);
        }
        if (claim instanceof Claim.Busy busy) {
            return new Outcome.Busy(key, busy.remaining().compareTo(Setbacks.BUSY_RETRY_MIN) < 0 ? Setbacks.BUSY_RETRY_MIN
                    : busy.remaining());
        }
        if (claim instanceof Claim.Unreadable unreadable) {
            return setbacks.deferred(item, "unreadable claim record: " + unreadable.detail(), null);
        }
        // A dead letter whose compensation was cut off by a crash: finish it, once, and only
        // while the compensation is still ours.
        Claim.Compensate cut = (Claim.Compensate) claim;
        if (round.held.lost(key) || (round.held.mayHaveExpired(key) && !claimStep.stillOurs(round, key))) {
            return setbacks.leaseLost(key);
        }
        return deadLetterStep.takeOver(round, item, cut);
    }

    /**
     * 2b and 2c. A lease found lost is not ours any more; a dead letter decided earlier, a defect, or a
     * crash loop gets no run (dooming the key confirms the claim is still ours).
     */
    private @Nullable Outcome beforeRun(Attempt<T> a) {
        Claim.Claimed claimed = a.claimed;
        if (a.round.held.lost(a.key())) {
            return setbacks.leaseLost(a.key());
        }
        int attempt = claimed.attempt();
        if (claimed.deadLetterReason().isPresent()) {
            return deadLetterStep.deadLetter(a, attempt - 1, claimed.deadLetterReason().get(),
                    claimed.lastError().orElse(""), null);
        }
        Prepared<T> item = a.item;
        if (item.defect() != null) {
            return deadLetterStep.deadLetter(a, attempt - 1, item.defect(), Failures.describe(item.defectCause()),
                    item.defectCause());
        }
        if (attempt > maxAttempts && !claimed.fresh()) {
            // The handler started maxAttempts times and never finished. A fresh record's attempt comes
            // from the broker's count alone, which also grows on deferrals: it gets one real run first.
            return follow(a, new Next.Doom(attempt - 1, "attempts exhausted: the handler started " + (attempt - 1)
                    + " times without finishing (the process crashed)", claimed.lastError().orElse(""), null));
        }
        return null;
    }

    /**
     * 2d. Before anything runs, the lease must still be ours: a takeover of an abandoned claim is
     * counted now (so a crash loop reaches the dead letter), and a lease that may have lapsed while the
     * batch waited is confirmed with the store.
     */
    private @Nullable Outcome confirmLease(Attempt<T> a) {
        Claim.Claimed claimed = a.claimed;
        if (!claimed.abandoned() && !a.round.held.mayHaveExpired(a.key())) {
            return null;
        }
        if (claimed.abandoned()) {
            // This message may be one that crashes the process: complete what this batch has
            // finished first, so a crash now cannot run those again.
            completions.completeWaiting(a.round);
        }
        try {
            return claimStep.count(a.round, a.key()) ? null : setbacks.leaseLost(a.key());
        } catch (ClaimStoreException e) {
            return setbacks.release(a.round, a.item, setbacks.deferred(a.item, "claim store unavailable", e),
                    claimed.takenOverFromCrash());
        }
    }

    /**
     * 2e. The business dedup check: the system of record has the last word. A handler that refuses
     * duplicates itself (the ledger's row comes first in its transaction) is that check.
     */
    private @Nullable Outcome check(Attempt<T> a) {
        try {
            return checkFirst && checkStep.found(a.delivery())
                    ? follow(a, checkStep.foundApplied(a, "found by the business check")) : null;
        } catch (Exception e) {
            // Before the handler: a takeover goes back abandoned, its count taken back, for the next owner.
            return setbacks.release(a.round, a.item, setbacks.deferred(a.item, "business check unavailable: "
                    + Failures.describe(e), e), a.claimed.takenOverFromCrash());
        }
    }

    /** Where a step's answer leads: the steps hand their next move back here rather than call each other. */
    private Outcome follow(Attempt<T> a, Next next) {
        if (next instanceof Next.Settled settled) {
            return settled.outcome();
        }
        if (next instanceof Next.Recover recover) {
            return deadLetterStep.recoverCompensation(a, recover.fence());
        }
        if (next instanceof Next.Failed failed) {
            return follow(a, failureStep.failed(a, failed.failure()));
        }
        if (next instanceof Next.Refused refused) {
            try {
                return follow(a, checkStep.foundApplied(a, "refused by the system of record: "
                        + refused.refusal().getMessage()));
            } catch (Exception unavailable) {
                return setbacks.release(a.round, a.item, setbacks.deferred(a.item, "business check unavailable: "
                        + Failures.describe(unavailable), unavailable));
            }
        }
        Next.Doom doom = (Next.Doom) next;
        return lastLook(a).orElseGet(() -> deadLetterStep.deadLetter(a, doom.attempts(), doom.reason(),
                doom.error() != null ? doom.error() : Failures.describe(doom.cause()), doom.cause()));
    }

    /** The business check asked again before a dead letter: an effect that committed after all is a duplicate. */
    private Optional<Outcome> lastLook(Attempt<T> a) {
        try {
            if (checkStep.found(a.delivery())) {
                return Optional.of(follow(a, checkStep.foundApplied(a, "found by the business check after a failure")));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.of(setbacks.release(a.round, a.item, setbacks.deferred(a.item, "business check unavailable: "
                    + Failures.describe(e), e)));
        }
    }

    private Outcome record(Prepared<T> item, Outcome outcome) {
        if (outcome.disposition().acknowledges()) {
            deferrals.settled(item.key());
        }
        meters.outcome(item.envelope().topic(), outcome);
        try {
            onOutcome.accept(outcome);
        } catch (RuntimeException e) {
            LOG.warn("outcome listener failed on {}", outcome, e);
        }
        return outcome;
    }

    // ---- 3. Close: release what never started, complete what finished -------------------------

    /**
     * Waits for messages still running on other threads, releases the claims of messages never
     * started, and sends the completion of the finished ones without waiting for it. Store failures
     * are logged, not thrown: the effects are applied and the business check guards them.
     */
    void close(Round<T> round) {
        round.lock.writeLock().lock();
        try {
            completions.closeRound(round);
        } finally {
            round.lock.writeLock().unlock();
        }
    }

    /** See {@link Batch#release(int, int)}. */
    void release(Round<T> round, int from, int to) {
        if (!round.lock.readLock().tryLock()) {
            return;   // closing: the close releases what never started
        }
        try {
            completions.releaseUnstarted(round, round.items.subList(from, to));
        } finally {
            round.lock.readLock().unlock();
        }
    }

    /**
     * For a consumer that cannot go on: does not wait for messages still running, completes every key
     * whose outcome is known and releases those never started. A key whose handler is still running
     * (or crashed) keeps its claim until the lease expires, as after a process crash.
     */
    void abandon(Round<T> round) {
        completions.closeRound(round);
    }

    @Override
    public void close() {
        completions.beginClose();
        // Batches still open (a handler outlived the consumer's grace): what finished is completed now,
        // all sent before any is awaited; handlers still running keep their leases until they return.
        for (Round<?> open : heldHere.openRounds()) {
            @SuppressWarnings("unchecked")
            Round<T> round = (Round<T>) open;
            completions.sendWaiting(round);
        }
        heldHere.awaitSent();
        completions.closeWhenIdle();
    }
}
