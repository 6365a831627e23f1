package dev.idem.core;

import org.jspecify.annotations.Nullable;
import dev.idem.core.internal.Deferrals;
import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.CompensationOutcome;
import dev.idem.core.spi.DeadLetterPublisher;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter end of a message's trip, in an order that survives a crash or an outage at any
 * step: the key doomed, the letter published, the key marked dead with its compensation held, the
 * compensation run and its outcome recorded (in the claim store, then in the ledger); and the
 * takeover of a compensation that a crash or a Redis loss cut off.
 *
 * @param <T> payload type
 */
final class DeadLetterStep<T> {

    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterStep.class);

    private final ClaimStore claims;
    private final EffectLedger<? super T> ledger;
    private final DeadLetterPublisher deadLetters;
    private final Compensation compensation;
    private final int compensationAttempts;
    private final CompensationRecords records;
    private final Deferrals deferrals;
    private final Setbacks<T> setbacks;
    private final Backoff backoff;
    private final Duration lease;
    private final Duration maxDeferral;
    private final Clock clock;
    private final Meters meters;
    private final Tracing tracing;

    DeadLetterStep(ProcessorConfig<T> c, EffectLedger<? super T> ledger, CompensationRecords records,
                   Deferrals deferrals, Setbacks<T> setbacks, Meters meters, Tracing tracing) {
        this.claims = c.claims();
        this.ledger = ledger;
        this.deadLetters = c.deadLetters();
        this.compensation = c.compensation();
        this.compensationAttempts = c.compensationAttempts();
        this.records = records;
        this.deferrals = deferrals;
        this.setbacks = setbacks;
        this.backoff = c.backoff();
        this.lease = c.lease();
        this.maxDeferral = c.maxDeferral();
        this.clock = c.clock();
        this.meters = meters;
        this.tracing = tracing;
    }

    /**
     * A dead letter whose compensation a crash cut off, taken over by this owner: finish the
     * compensation, once. The letter is not published again.
     */
    Outcome takeOver(Round<T> round, Prepared<T> item, Claim.Compensate cut) {
        DeadLetter letter = deadLetterOf(item, cut.fence(), cut.attempts(), cut.reason(),
                cut.lastError().orElse(""), null, Optional.empty());
        Compensated compensated = compensate(round, letter);
        if (compensated != Compensated.RECORDED) {
            return notRecorded(item, compensated);
        }
        return new Outcome.DeadLettered(item.key(), cut.attempts(), cut.reason(), true);
    }

    /**
     * The dead letter, in an order that survives a crash or an outage at any step: first the store
     * records that the key is to be dead-lettered (from then on nobody runs its handler), then the
     * letter is published and acknowledged by the broker, then the key is marked dead with its
     * compensation held by this owner, then the compensation runs and its outcome is recorded.
     */
    Outcome deadLetter(Attempt<T> a, int attempts, String reason, String error, @Nullable Throwable cause) {
        Round<T> round = a.round;
        Prepared<T> item = a.item;
        IdempotencyKey key = item.key();
        try {
            if (!claims.doom(key, round.owner, reason, error)) {
                return setbacks.leaseLost(key);
            }
        } catch (ClaimStoreException e) {
            return setbacks.deferred(item, "claim store unavailable", e);
        }
        DeadLetter letter = deadLetterOf(item, a.claimed.fence(), attempts, reason, error, cause,
                a.claimed.firstFailureAt());
        Tracing.Step publishSpan = tracing.step("idem dead letter").attribute("idem.reason", reason);
        try {
            deadLetters.publish(letter);
            publishSpan.close();
        } catch (Error e) {
            publishSpan.failed(e).close();
            throw e;
        } catch (Exception e) {
            publishSpan.failed(e).close();
            meters.publishFailed();
            Duration delay = backoff.delay(Math.max(1, attempts));
            LOG.error("could not publish the dead letter for {} ({}); not acknowledging, trying again in {}",
                    key, reason, delay, e);
            try {
                claims.postpone(key, round.owner, delay);
            } catch (ClaimStoreException storeDown) {
                LOG.warn("could not postpone {} after the failed dead-letter publish; its lease will expire", key,
                        storeDown);
            }
            return new Outcome.Deferred(key, "dead-letter publish failed", e, delay);
        }
        LOG.error("dead-lettered {} after {} attempt(s): {}", key, attempts, reason, cause);
        Exception unrecorded = null;
        try {
            // As durable as an applied effect: a Redis loss must not repeat this series.
            ledger.deadLettered(letter);
        } catch (Exception e) {
            // Not a reason to publish again: every redelivery would add a copy for as long as the
            // system of record is down. The key is marked dead below, and its compensation is left
            // to the delivery that takes it over after the lease, which records both (decision 0036).
            LOG.warn("dead letter for {} published, but the business check could not record it; marking it dead, "
                    + "not acknowledging: the compensation runs and is recorded after its lease", key, e);
            unrecorded = e;
        }
        try {
            if (!claims.deadLetter(key, round.owner, lease)) {
                // Another owner took the key over, or the store lost its record: not acknowledged, so
                // a redelivery finds who holds the compensation (Busy, then Dead) or, with the record
                // lost, finishes the compensation the business check says is pending.
                LOG.warn("dead letter for {} published, but its claim was lost (taken over, or the claim store lost "
                        + "its record); not acknowledging: the compensation is left to whoever holds the key", key);
                return setbacks.deferred(item, "claim lost after the dead letter was published", null);
            }
        } catch (ClaimStoreException e) {
            // The key stays doomed: its next delivery publishes the letter again (a second copy in
            // the dead-letter topic), marks it, and compensates, once.
            LOG.warn("dead letter for {} published, but the claim store did not record it; not acknowledging", key, e);
            return setbacks.deferred(item, "claim store unavailable", e);
        }
        if (unrecorded != null) {
            // Not renewed from now on: a copy is Busy until the compensation lease ends, then takes
            // the compensation over (Claim.Compensate) and records it, the business check likely back.
            return setbacks.deferred(item, "dead letter published; business check unavailable: "
                    + Failures.describe(unrecorded), unrecorded);
        }
        Compensated compensated = compensate(round, letter);
        if (compensated != Compensated.RECORDED) {
            return notRecorded(item, compensated);
        }
        return new Outcome.DeadLettered(key, attempts, reason, false);
    }

    /**
     * A key the business check remembers as dead-lettered, with no compensation outcome, while the
     * claim store has no record of it (it lost the record between the dead letter and the end of its
     * compensation): mark it dead again, its compensation held by this owner, and compensate, once,
     * under the fence the ledger recorded with the dead letter, so the compensation keeps its id. The
     * letter is not published again.
     */
    Outcome recoverCompensation(Attempt<T> a, long recordedFence) {
        Round<T> round = a.round;
        Prepared<T> item = a.item;
        IdempotencyKey key = item.key();
        String reason = "dead-lettered earlier; compensation finished after the claim store lost its record";
        try {
            // Marked dead under the ledger's fence, so a takeover of this compensation keeps its id.
            if (!claims.deadLetter(key, round.owner, lease, recordedFence)) {
                return setbacks.leaseLost(key);
            }
        } catch (ClaimStoreException e) {
            return setbacks.release(round, item, setbacks.deferred(item, "claim store unavailable", e));
        }
        LOG.warn("{} was dead-lettered earlier but its compensation has no outcome, and the claim store lost "
                + "its record: compensating now", key);
        DeadLetter letter = deadLetterOf(item, recordedFence, a.claimed.attempt() - 1, reason, "", null,
                a.claimed.firstFailureAt());
        Compensated compensated = compensate(round, letter);
        if (compensated != Compensated.RECORDED) {
            return notRecorded(item, compensated);
        }
        return new Outcome.DeadLettered(key, letter.attempts(), reason, true);
    }

    private DeadLetter deadLetterOf(Prepared<T> item, long fence, int attempts, String reason, String error,
                                    @Nullable Throwable cause, Optional<Instant> firstFailureAt) {
        Instant now = clock.instant();
        String traceParent = tracing.traceParent();
        return new DeadLetter(item.key(), fence, item.envelope(), attempts, reason,
                cause == null ? Failures.classOf(error) : cause.getClass().getName(),
                cause == null ? Failures.messageOf(error) : Failures.message(cause),
                Failures.stackTrace(cause), firstFailureAt.orElse(now), now, traceParent == null ? "" : traceParent);
    }

    /**
     * A copy of a key dead-lettered earlier: acknowledged. When this process compensated it but the
     * business check could not record it then, the copy records it first; past {@code maxDeferral}
     * of trying it is acknowledged all the same, with an error (the claim store alone remembers it).
     */
    Outcome recordedDead(Prepared<T> item) {
        IdempotencyKey key = item.key();
        String reason = "dead-lettered by an earlier delivery";
        Optional<CompensationOutcome> unwritten = records.unwritten(key);
        if (unwritten.isPresent()) {
            DeadLetter letter = deadLetterOf(item, 0, 0, reason, "", null, Optional.empty());
            if (!records.write(letter, unwritten.get())) {
                Duration trying = deferrals.handlerTrouble(key, clock.instant());
                if (trying.compareTo(maxDeferral) <= 0) {
                    return setbacks.deferred(item, "the business check could not record the dead letter yet", null);
                }
                LOG.error("the business check could not record the dead letter of {} for {}; acknowledging: the claim "
                        + "store alone remembers it", key, trying);
            }
            records.settled(key);
        }
        return new Outcome.DeadLettered(key, 0, reason, true);
    }

    /** How a compensation ended, for the delivery that ran it. */
    private enum Compensated {
        /** Ran (or failed for good) and recorded: acknowledge. */
        RECORDED,
        /** Ran, but the business check could not record it: a copy records it. */
        UNRECORDED,
        /** Could not run for infrastructure trouble: still pending, run again by the next delivery. */
        DEFERRED
    }

    /**
     * A compensation not recorded: not acknowledged. A copy comes back and either records it (it ran:
     * the key is dead, never run again) or runs it (deferred: it is still pending, under this owner's
     * lease, which is not renewed).
     */
    private Outcome notRecorded(Prepared<T> item, Compensated compensated) {
        return compensated == Compensated.DEFERRED
                ? setbacks.deferred(item, "dead-lettered; its compensation met infrastructure trouble and runs again", null)
                : setbacks.deferred(item, "dead-lettered and compensated; the business check could not record it yet", null);
    }

    /**
     * Runs the compensation hook, a bounded number of times, and records its outcome, once.
     * Infrastructure trouble (the ledger's database unreachable, a deadlock, a refused connection)
     * is not the compensation's failure: no outcome is recorded, so it stays pending and the next
     * delivery runs it again, with backoff, for up to {@code maxDeferral}; only then does it count.
     */
    private Compensated compensate(Round<T> round, DeadLetter letter) {
        IdempotencyKey key = letter.key();
        round.held.add(key);
        CompensationOutcome outcome = CompensationOutcome.OK;
        Throwable last = null;
        for (int i = 1; i <= compensationAttempts; i++) {
            Tracing.Step span = tracing.step("idem compensation").attribute("idem.compensation.attempt", i);
            try {
                compensation.compensate(letter);
                span.close();
                last = null;
                break;
            } catch (Exception | Error e) {
                span.failed(e).close();
                if (e instanceof Error error && Failures.isCrash(error)) {
                    throw error;
                }
                last = e;
                if (setbacks.troubleAge(key, e).filter(age -> age.compareTo(maxDeferral) <= 0).isPresent()) {
                    // Left pending under this owner's lease, no longer renewed: the next delivery (this
                    // owner's, or another's after the lease) takes it over and runs it again.
                    round.held.drop(key);
                    LOG.warn("compensation for {} met infrastructure trouble; not counted, it runs again", key, e);
                    return Compensated.DEFERRED;
                }
            }
        }
        if (last != null) {
            meters.compensationFailed();
            LOG.error("compensation for {} failed {} time(s); it will not run again", key, compensationAttempts, last);
            outcome = CompensationOutcome.failed(Failures.describe(last));
        }
        boolean inStore = false;
        try {
            inStore = claims.recordCompensation(key, round.owner, outcome);
            if (!inStore) {
                LOG.warn("compensation for {} ran, but it had passed to another owner (its lease lapsed)", key);
            }
        } catch (ClaimStoreException e) {
            LOG.warn("compensation outcome '{}' for {} could not be recorded; it may run once more after its "
                    + "lease ends", outcome, key, e);
        } finally {
            round.held.drop(key);
        }
        if (records.write(letter, outcome) || !inStore) {
            // Not recorded in the claim store: a copy would take the compensation over and run it again,
            // so the message is acknowledged, as before, whatever the business check said.
            return Compensated.RECORDED;
        }
        records.unwritten(key, outcome);
        deferrals.handlerTrouble(key, clock.instant());   // starts the maxDeferral clock of its copies
        return Compensated.UNRECORDED;
    }
}
