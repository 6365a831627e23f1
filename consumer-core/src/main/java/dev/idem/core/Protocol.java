package dev.idem.core;

import dev.idem.core.internal.Deferrals;
import dev.idem.core.internal.Failures;
import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Prepared;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.CompensationOutcome;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.core.spi.FailureCount;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Idem's fixed order, the whole of it, top to bottom (docs/design.md, "The processing order"):
 * <ol>
 *   <li>{@link #open}: decode each message and find its key, claim every key in one round trip,
 *       and hold the claims (their leases are renewed until the batch closes);</li>
 *   <li>{@link #run}, per message: read the claim's answer, make sure the lease still holds, run the
 *       business check, run the handler, then settle: done, retry, or dead letter and compensation;</li>
 *   <li>{@link #close}: release the claims of messages never started, and complete the finished keys
 *       in one round trip that is sent, not awaited (decision 0007).</li>
 * </ol>
 * Only this class and the lease renewer call the {@link ClaimStore}. Users cannot reorder the steps.
 * Thread-safe.
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
    // A busy key comes back when its lease ends, the earliest moment it can be ours. Retrying sooner
    // only spends the broker's redelivery count.
    private static final Duration BUSY_RETRY_MIN = Duration.ofMillis(50);
    // A copy of a key that is running on another thread of the same batch comes back this soon.
    private static final Duration SAME_KEY_RETRY = Duration.ofMillis(100);
    // How long opening a batch or closing the processor waits for the previous completion: a Redis
    // round trip, with margin.
    private static final Duration COMPLETION_WAIT = Duration.ofSeconds(5);
    private static final Object RUNNING = new Object();
    // A batch running longer than this sends the completion of its finished keys on the way, not
    // only at its close: about as often as an adapter commits offsets.
    private static final Duration EAGER_COMPLETION = Duration.ofSeconds(1);

    private final String group;
    private final ClaimStore claims;
    private final EffectLedger<? super T> dedupCheck;
    // False when the handler itself refuses what the check would find (the ledger's insert comes first).
    private final boolean checkFirst;
    private final DeliveryHandler<T> handler;
    private final HandlerInterceptor interceptor;
    private final PayloadCodec<T> codec;
    private final KeySource<T> keys;
    private final int maxAttempts;
    private final Duration lease;
    private final Backoff backoff;
    private final Duration maxDeferral;
    private final Deferrals deferrals;
    private final CompensationRecords records;
    private final Failures failures;
    private final DeadLetterPublisher deadLetters;
    private final Compensation compensation;
    private final int compensationAttempts;
    private final Clock clock;
    private final Meters meters;
    private final Consumer<Outcome> onOutcome;
    private final LeaseRenewer renewer;
    private final String instance = UUID.randomUUID().toString().substring(0, 13);
    private final AtomicLong owners = new AtomicLong();
    private final AtomicBoolean storeDown = new AtomicBoolean();
    // Completions sent and not yet confirmed, each with its keys (decision 0007): a claim that finds
    // one of these keys busy waits for its completion and asks again, instead of every claim waiting.
    private final Map<CompletableFuture<Void>, List<IdempotencyKey>> completing = new ConcurrentHashMap<>();

    Protocol(IdempotentProcessor.Builder<T> b, Meters meters) {
        this.group = b.group;
        this.claims = b.claims;
        this.dedupCheck = EffectLedger.of(b.dedupCheck);
        this.checkFirst = !dedupCheck.refusesDuplicates(b.handler);
        this.records = new CompensationRecords(dedupCheck);
        this.handler = b.handler;
        this.interceptor = b.interceptor;
        this.codec = b.codec;
        this.keys = KeyTextSource.of(b.keys);
        this.maxAttempts = b.maxAttempts;
        this.lease = b.lease;
        this.backoff = b.backoff;
        this.maxDeferral = b.maxDeferral;
        this.deferrals = new Deferrals(b.backoff.delay(64));
        this.failures = new Failures(b.fatal, b.infrastructure);
        this.deadLetters = b.deadLetters;
        this.compensation = b.compensation;
        this.compensationAttempts = b.compensationAttempts;
        this.clock = b.clock;
        this.meters = meters;
        meters.oldestDeferral(() -> {
            Instant now = clock.instant();
            return deferrals.oldest(now).map(since -> Duration.between(since, now)).orElse(Duration.ZERO);
        });
        this.onOutcome = b.onOutcome;
        this.renewer = new LeaseRenewer(b.claims, b.lease, meters);
    }

    Duration lease() {
        return lease;
    }

    /** A batch's state: its claims, what ran, what finished. */
    static final class Round<T> {
        private final String owner;
        private final List<Prepared<T>> items;
        private final Map<IdempotencyKey, Claim> claims;
        private final ClaimStoreException claimFailure;
        private final LeaseRenewer.Held held;
        // Sized for the batch: growing them showed in profiles of 500-record polls.
        private final Map<IdempotencyKey, Object> settled;
        private final Set<IdempotencyKey> started;
        private final Set<IdempotencyKey> toComplete;
        // When the oldest finished key still waiting for its completion finished (guarded by this).
        private long waitingSinceNanos;
        // Messages running now (guarded by this): renewal stops only once none runs.
        private int running;
        // Messages run under the read lock; close takes the write lock, so it waits for them.
        private final ReadWriteLock lock = new ReentrantReadWriteLock();
        private volatile boolean closed;

        private Round(String owner, List<Prepared<T>> items, Map<IdempotencyKey, Claim> claims,
                      ClaimStoreException claimFailure, LeaseRenewer.Held held) {
            this.owner = owner;
            this.items = items;
            this.claims = claims;
            this.claimFailure = claimFailure;
            this.held = held;
            this.settled = new ConcurrentHashMap<>(items.size());
            this.started = ConcurrentHashMap.newKeySet(items.size());
            this.toComplete = ConcurrentHashMap.newKeySet(items.size());
        }

        int size() {
            return items.size();
        }
    }

    // ---- 1. Open: prepare, claim, hold ---------------------------------------------------------

    Round<T> open(List<Envelope> envelopes) {
        List<Prepared<T>> items = new ArrayList<>(envelopes.size());
        Map<IdempotencyKey, ClaimRequest> requests = new LinkedHashMap<>(envelopes.size() * 2);
        for (Envelope envelope : envelopes) {
            Prepared<T> item = prepare(envelope);
            items.add(item);
            requests.putIfAbsent(item.key(), new ClaimRequest(item.key(), envelope.brokerAttempt(), envelope.timestamp()));
        }
        String owner = instance + "-" + owners.incrementAndGet();
        Map<IdempotencyKey, Claim> answers = new HashMap<>(requests.size() * 2);
        ClaimStoreException failure = null;
        long claimedAt = System.nanoTime();
        try {
            for (Claim claim : claimAll(List.copyOf(requests.values()), owner)) {
                answers.put(claim.key(), claim);
            }
            claimAgainAfterOwnCompletions(requests, answers, owner);
        } catch (ClaimStoreException e) {
            failure = e;
        }
        List<IdempotencyKey> held = answers.values().stream()
                .filter(c -> c instanceof Claim.Claimed || c instanceof Claim.Compensate).map(Claim::key).toList();
        return new Round<>(owner, items, answers, failure, renewer.hold(owner, held, claimedAt));
    }

    /**
     * A key found busy because this processor's own completion of it is still on its way (a copy
     * in the next poll, or in another thread's batch) is claimed again once that completion landed,
     * so it is found done rather than sent back as busy.
     */
    private void claimAgainAfterOwnCompletions(Map<IdempotencyKey, ClaimRequest> requests,
                                               Map<IdempotencyKey, Claim> answers, String owner) {
        Set<IdempotencyKey> busy = new HashSet<>();
        answers.values().forEach(claim -> {
            if (claim instanceof Claim.Busy) {
                busy.add(claim.key());
            }
        });
        if (busy.isEmpty()) {
            return;
        }
        List<ClaimRequest> again = new ArrayList<>();
        Set<CompletableFuture<Void>> awaited = new HashSet<>();
        completing.forEach((landed, keys) -> keys.stream().filter(busy::contains).forEach(key -> {
            again.add(requests.get(key));
            awaited.add(landed);
        }));
        if (again.isEmpty()) {
            return;
        }
        awaitAll(awaited);
        for (Claim claim : claimAll(again, owner)) {
            answers.put(claim.key(), claim);
        }
    }

    /** Decodes the payload and finds the key; never throws: a defect travels with the message. */
    private Prepared<T> prepare(Envelope envelope) {
        IdempotencyKey fallback = new IdempotencyKey(group, envelope.topic(), envelope.messageId());
        T payload = null;
        String defect = null;
        Throwable cause = null;
        try {
            payload = codec.decode(envelope.body());
            if (payload == null) {
                defect = "undecodable payload: the codec returned null";
            }
        } catch (Exception | LinkageError | StackOverflowError e) {
            defect = "undecodable payload: " + Failures.describe(e);
            cause = e;
        }
        String key;
        try {
            key = keys.keyOf(envelope, payload);
        } catch (RuntimeException e) {
            // A payload key function given no payload (undecodable body) finds no key: the decode
            // failure is the reason then. Otherwise the key function's own failure is.
            return defect != null ? new Prepared<>(envelope, fallback, null, defect, cause)
                    : new Prepared<>(envelope, fallback, null, "idempotency key function failed: "
                    + Failures.describe(e), e);
        }
        if (key == null || key.isBlank()) {
            return new Prepared<>(envelope, fallback, null, defect != null ? defect : "no idempotency key", cause);
        }
        if (key.length() > IdempotencyKey.MAX_VALUE_LENGTH) {
            return new Prepared<>(envelope, fallback, null, "idempotency key longer than "
                    + IdempotencyKey.MAX_VALUE_LENGTH + " characters (" + key.length() + ")", cause);
        }
        return new Prepared<>(envelope, new IdempotencyKey(group, envelope.topic(), key), payload, defect, cause);
    }

    /** Claims keys in one call; a store failure is logged once per outage and rethrown. */
    private List<Claim> claimAll(List<ClaimRequest> requests, String owner) {
        try {
            List<Claim> answers = meters.claim(() -> claims.claim(requests, owner, lease));
            if (storeDown.compareAndSet(true, false)) {
                LOG.info("claim store reachable again; processing resumes");
            }
            return answers;
        } catch (ClaimStoreException e) {
            meters.storeUnavailable();
            if (storeDown.compareAndSet(false, true)) {
                LOG.error("claim store unreachable; failing closed: nothing is acknowledged until it answers", e);
            }
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("claim store failed unexpectedly", e);
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
            IdempotencyKey key = item.key();
            if (round.claimFailure != null) {
                return record(item, deferred(item, "claim store unavailable", round.claimFailure));
            }
            // The same key earlier in this batch is not run again.
            Object prior = round.settled.putIfAbsent(key, RUNNING);
            if (prior == RUNNING) {
                return record(item, new Outcome.Busy(key, SAME_KEY_RETRY));
            }
            if (prior instanceof Outcome earlier) {
                return record(item, earlier.disposition().acknowledges()
                        ? new Outcome.Duplicate(key, "same key earlier in this batch")
                        : new Outcome.Busy(key, earlier.disposition().delay()));
            }
            // Marked before running, together with the closed check: an abandon either sees this
            // message started (and leaves its claim alone) or stops it here. If the process cannot
            // go on (an out-of-memory error escapes), the key is left as after a crash.
            synchronized (round) {
                if (round.closed) {
                    round.settled.remove(key, RUNNING);
                    throw new IllegalStateException("batch is closed");
                }
                round.started.add(key);
                round.running++;
            }
            Claim claim = round.claims.get(key);
            Outcome outcome;
            MDC.put("idem.key", key.value());
            MDC.put("idem.topic", key.topic());
            try {
                outcome = settle(round, item, claim);
            } finally {
                MDC.remove("idem.key");
                MDC.remove("idem.topic");
                MDC.remove("idem.attempt");
                stopped(round);
            }
            round.settled.put(key, outcome);
            if (claim instanceof Claim.Claimed && (outcome instanceof Outcome.Applied
                    || outcome instanceof Outcome.Duplicate)) {
                // Still held (and renewed) until its completion is sent: a finished key must not
                // lapse and run again elsewhere while the rest of a long batch runs.
                finished(round, key);
            } else {
                round.held.drop(key);
            }
            return record(item, outcome);
        } finally {
            round.lock.readLock().unlock();
        }
    }

    private Outcome settle(Round<T> round, Prepared<T> item, Claim claim) {
        IdempotencyKey key = item.key();
        // 2a. The claim's answer: settled earlier, someone else's, or ours.
        if (claim instanceof Claim.Done) {
            return new Outcome.Duplicate(key, "recorded as done in the claim store");
        }
        if (claim instanceof Claim.Dead) {
            return recordedDead(item);
        }
        if (claim instanceof Claim.Busy busy) {
            return new Outcome.Busy(key, busy.remaining().compareTo(BUSY_RETRY_MIN) < 0 ? BUSY_RETRY_MIN
                    : busy.remaining());
        }
        if (claim instanceof Claim.Unreadable unreadable) {
            return deferred(item, "unreadable claim record: " + unreadable.detail(), null);
        }
        if (claim instanceof Claim.Compensate cut) {
            // A dead letter whose compensation was cut off by a crash: finish it, once, and only
            // while the compensation is still ours.
            if (round.held.lost(key) || (round.held.mayHaveExpired(key) && !confirmRenewed(round, key))) {
                return leaseLostBeforeStart(key);
            }
            DeadLetter letter = deadLetterOf(item, cut.fence(), cut.attempts(), cut.reason(),
                    cut.lastError().orElse(""), null, Optional.empty());
            Compensated compensated = compensate(round, letter);
            if (compensated != Compensated.RECORDED) {
                return notRecorded(item, compensated);
            }
            return new Outcome.DeadLettered(key, cut.attempts(), cut.reason(), true);
        }
        Claim.Claimed claimed = (Claim.Claimed) claim;
        int attempt = claimed.attempt();
        MDC.put("idem.attempt", Integer.toString(attempt));

        // 2b. A lease found lost is not ours any more.
        if (round.held.lost(key)) {
            return leaseLostBeforeStart(key);
        }

        // 2c. A dead letter decided earlier, a defect, or a crash loop: no run (dooming the key
        // confirms the claim is still ours).
        if (claimed.deadLetterReason().isPresent()) {
            String error = claimed.lastError().orElse("");
            return deadLetter(round, item, claimed, attempt - 1, claimed.deadLetterReason().get(), error, null);
        }
        if (item.defect() != null) {
            return deadLetter(round, item, claimed, attempt - 1, item.defect(), Failures.describe(item.defectCause()),
                    item.defectCause());
        }
        Delivery<T> delivery = new Delivery<>(key, claimed.fence(), attempt, item.envelope(), item.payload());
        if (attempt > maxAttempts && !claimed.fresh()) {
            // The handler started maxAttempts times and never finished. A fresh record's attempt comes
            // from the broker's count alone, which also grows on deferrals: it gets one real run first.
            return alreadyApplied(round, item, claimed, delivery).orElseGet(() -> deadLetter(round, item, claimed, attempt - 1,
                    "attempts exhausted: the handler started " + (attempt - 1) + " times without finishing "
                            + "(the process crashed)", claimed.lastError().orElse(""), null));
        }

        // 2d. Before anything runs, the lease must still be ours: a takeover of an abandoned claim is
        // counted now (so a crash loop reaches the dead letter), and a lease that may have lapsed
        // while the batch waited is confirmed with the store.
        if (claimed.abandoned() || round.held.mayHaveExpired(key)) {
            if (claimed.abandoned()) {
                // This message may be one that crashes the process: complete what this batch has
                // finished first, so a crash now cannot run those again.
                completeWaiting(round);
            }
            long sentAt = System.nanoTime();
            try {
                if (!claims.count(key, round.owner, lease)) {
                    return leaseLostBeforeStart(key);
                }
                round.held.confirmed(key, sentAt);
            } catch (ClaimStoreException e) {
                return release(round, item, deferred(item, "claim store unavailable", e));
            }
        }

        // 2e. The business dedup check: the system of record has the last word. A handler that
        // refuses duplicates itself (the ledger's row comes first in its transaction) is that check.
        try {
            if (checkFirst && dedupCheck.alreadyApplied(delivery)) {
                return foundApplied(round, item, claimed, delivery, "found by the business check");
            }
        } catch (Exception e) {
            return release(round, item, deferred(item, "business check unavailable: " + Failures.describe(e), e));
        }

        // 2f. The handler, through the interceptor slot, while the lease is renewed.
        try {
            meters.handler(() -> {
                interceptor.intercept(delivery, new OnceProceed(() -> handler.handle(delivery)));
                return null;
            });
        } catch (Exception | Error e) {
            DuplicateEffectException refused = Failures.refusal(e);
            if (refused != null) {
                // Refused by the system of record, also when an interceptor wrapped the refusal.
                try {
                    return foundApplied(round, item, claimed, delivery, "refused by the system of record: "
                            + refused.getMessage());
                } catch (Exception unavailable) {
                    return release(round, item, deferred(item, "business check unavailable: "
                            + Failures.describe(unavailable), unavailable));
                }
            }
            if (e instanceof Error error && Failures.isCrash(error)) {
                // The process cannot go on: leave the claim as a crash would (its lease expires and
                // the next run is counted).
                throw error;
            }
            return failed(round, item, claimed, delivery, e);
        }
        boolean leaseLost = round.held.lost(key) || round.held.mayHaveExpired(key);
        if (leaseLost) {
            meters.leaseLost(1);
            LOG.warn("{} applied, but its lease may have passed to another owner while the handler ran; the "
                    + "business check is what keeps the effect single", key);
        }
        return new Outcome.Applied(key, claimed.fence(), attempt, leaseLost);
    }

    /** The system of record has the key: a duplicate, or a dead letter whose compensation is to finish. */
    private Outcome foundApplied(Round<T> round, Prepared<T> item, Claim.Claimed claimed, Delivery<T> delivery,
                                 String reason) throws Exception {
        if (dedupCheck.compensationPending(delivery)) {
            return recoverCompensation(round, item, claimed);
        }
        return new Outcome.Duplicate(item.key(), reason);
    }

    /** Renews one held key now; false if it is no longer ours (or the store cannot tell). */
    private boolean confirmRenewed(Round<T> round, IdempotencyKey key) {
        long sentAt = System.nanoTime();
        try {
            if (claims.renew(List.of(key), round.owner, lease).isEmpty()) {
                round.held.confirmed(key, sentAt);
                return true;
            }
            return false;
        } catch (ClaimStoreException e) {
            return false;
        }
    }

    private Outcome leaseLostBeforeStart(IdempotencyKey key) {
        meters.leaseLost(1);
        LOG.warn("{} not started: its lease passed to another owner", key);
        return new Outcome.Busy(key, BUSY_RETRY_MIN);
    }

    // ---- 2g. Settling a failure: retry, defer, or dead letter ----------------------------------

    private Outcome failed(Round<T> round, Prepared<T> item, Claim.Claimed claimed, Delivery<T> delivery,
                           Throwable failure) {
        IdempotencyKey key = item.key();
        Optional<Duration> trouble = troubleAge(key, failure);
        if (trouble.isPresent()) {
            Duration age = trouble.get();
            if (age.compareTo(maxDeferral) <= 0) {
                LOG.warn("attempt {} of {} met infrastructure trouble; deferring, not counting it", claimed.attempt(),
                        key, failure);
                return release(round, item, deferred(item, "infrastructure unavailable: " + Failures.describe(failure),
                        failure));
            }
            // Trouble that outlasts the bound is the message's own (a host that is gone, a request
            // that can never succeed): counted, so it ends in the dead letter instead of blocking.
            LOG.warn("{} has met infrastructure trouble for {}, longer than maxDeferral ({}); counting it as a failure",
                    key, age, maxDeferral);
        }
        boolean fatal = failures.isFatal(failure);
        if (fatal || claimed.attempt() >= maxAttempts) {
            // The transaction may have committed although the handler threw (a lost commit reply).
            Optional<Outcome> applied = alreadyApplied(round, item, claimed, delivery);
            if (applied.isPresent()) {
                return applied.get();
            }
            return deadLetter(round, item, claimed, claimed.attempt(), fatal ? "non-retryable failure"
                    : "attempts exhausted", Failures.describe(failure), failure);
        }
        try {
            round.held.drop(key);   // given up now: a renewal under way will not find it, and that is no loss
            Optional<FailureCount> count = claims.fail(key, round.owner, Failures.describe(failure));
            int attempts = count.map(FailureCount::attempts).orElse(claimed.attempt());
            LOG.warn("attempt {} of {} failed for {}; redelivering", attempts, maxAttempts, key, failure);
            return new Outcome.Retrying(key, attempts, failure, backoff.delay(attempts));
        } catch (ClaimStoreException e) {
            LOG.warn("attempt {} failed for {} and could not be counted (claim store unavailable)",
                    claimed.attempt(), key, failure);
            return deferred(item, "claim store unavailable", e);
        }
    }

    /** Runs the business check again; a found effect completes the key as a duplicate. */
    private Optional<Outcome> alreadyApplied(Round<T> round, Prepared<T> item, Claim.Claimed claimed,
                                             Delivery<T> delivery) {
        try {
            if (dedupCheck.alreadyApplied(delivery)) {
                return Optional.of(foundApplied(round, item, claimed, delivery,
                        "found by the business check after a failure"));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.of(release(round, item, deferred(item, "business check unavailable: "
                    + Failures.describe(e), e)));
        }
    }

    /**
     * The dead letter, in an order that survives a crash or an outage at any step: first the store
     * records that the key is to be dead-lettered (from then on nobody runs its handler), then the
     * letter is published and acknowledged by the broker, then the key is marked dead with its
     * compensation held by this owner, then the compensation runs and its outcome is recorded.
     */
    private Outcome deadLetter(Round<T> round, Prepared<T> item, Claim.Claimed claimed, int attempts, String reason,
                               String error, Throwable cause) {
        IdempotencyKey key = item.key();
        try {
            if (!claims.doom(key, round.owner, reason, error)) {
                return leaseLostBeforeStart(key);
            }
        } catch (ClaimStoreException e) {
            return deferred(item, "claim store unavailable", e);
        }
        DeadLetter letter = deadLetterOf(item, claimed.fence(), attempts, reason, error, cause,
                claimed.firstFailureAt());
        try {
            deadLetters.publish(letter);
        } catch (Exception e) {
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
            dedupCheck.deadLettered(letter);
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
                return deferred(item, "claim lost after the dead letter was published", null);
            }
        } catch (ClaimStoreException e) {
            // The key stays doomed: its next delivery publishes the letter again (a second copy in
            // the dead-letter topic), marks it, and compensates, once.
            LOG.warn("dead letter for {} published, but the claim store did not record it; not acknowledging", key, e);
            return deferred(item, "claim store unavailable", e);
        }
        if (unrecorded != null) {
            // Not renewed from now on: a copy is Busy until the compensation lease ends, then takes
            // the compensation over (Claim.Compensate) and records it, the business check likely back.
            return deferred(item, "dead letter published; business check unavailable: "
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
     * compensation): mark it dead again, its compensation held by this owner, and compensate, once.
     * The letter is not published again.
     */
    private Outcome recoverCompensation(Round<T> round, Prepared<T> item, Claim.Claimed claimed) {
        IdempotencyKey key = item.key();
        String reason = "dead-lettered earlier; compensation finished after the claim store lost its record";
        try {
            if (!claims.deadLetter(key, round.owner, lease)) {
                return leaseLostBeforeStart(key);
            }
        } catch (ClaimStoreException e) {
            return release(round, item, deferred(item, "claim store unavailable", e));
        }
        LOG.warn("{} was dead-lettered earlier but its compensation has no outcome, and the claim store lost "
                + "its record: compensating now", key);
        DeadLetter letter = deadLetterOf(item, claimed.fence(), claimed.attempt() - 1, reason, "", null,
                claimed.firstFailureAt());
        Compensated compensated = compensate(round, letter);
        if (compensated != Compensated.RECORDED) {
            return notRecorded(item, compensated);
        }
        return new Outcome.DeadLettered(key, letter.attempts(), reason, true);
    }

    private DeadLetter deadLetterOf(Prepared<T> item, long fence, int attempts, String reason, String error,
                                    Throwable cause, Optional<Instant> firstFailureAt) {
        Instant now = clock.instant();
        return new DeadLetter(item.key(), fence, item.envelope(), attempts, reason,
                cause == null ? Failures.classOf(error) : cause.getClass().getName(),
                cause == null ? Failures.messageOf(error) : Failures.message(cause),
                Failures.stackTrace(cause), firstFailureAt.orElse(now), now);
    }

    /**
     * A copy of a key dead-lettered earlier: acknowledged. When this process compensated it but the
     * business check could not record it then, the copy records it first; past {@code maxDeferral}
     * of trying it is acknowledged all the same, with an error (the claim store alone remembers it).
     */
    private Outcome recordedDead(Prepared<T> item) {
        IdempotencyKey key = item.key();
        String reason = "dead-lettered by an earlier delivery";
        Optional<CompensationOutcome> unwritten = records.unwritten(key);
        if (unwritten.isPresent()) {
            DeadLetter letter = deadLetterOf(item, 0, 0, reason, "", null, Optional.empty());
            if (!records.write(letter, unwritten.get())) {
                Duration trying = deferrals.handlerTrouble(key, clock.instant());
                if (trying.compareTo(maxDeferral) <= 0) {
                    return deferred(item, "the business check could not record the dead letter yet", null);
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
                ? deferred(item, "dead-lettered; its compensation met infrastructure trouble and runs again", null)
                : deferred(item, "dead-lettered and compensated; the business check could not record it yet", null);
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
            try {
                compensation.compensate(letter);
                last = null;
                break;
            } catch (Exception | Error e) {
                if (e instanceof Error error && Failures.isCrash(error)) {
                    throw error;
                }
                last = e;
                if (troubleAge(key, e).filter(age -> age.compareTo(maxDeferral) <= 0).isPresent()) {
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

    /**
     * How long the key has met infrastructure trouble in a row, empty when {@code failure} is not
     * infrastructure trouble. The business check's own store failing is never bounded (zero):
     * nothing is known about the key.
     */
    private Optional<Duration> troubleAge(IdempotencyKey key, Throwable failure) {
        if (!failures.isInfrastructure(failure)) {
            return Optional.empty();
        }
        return Optional.of(Failures.isCheckUnavailable(failure) ? Duration.ZERO
                : deferrals.handlerTrouble(key, clock.instant()));
    }

    /** Hands a claim back uncounted (infrastructure trouble: not the message's fault). */
    private Outcome release(Round<T> round, Prepared<T> item, Outcome outcome) {
        try {
            round.held.drop(item.key());
            claims.release(List.of(item.key()), round.owner);
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {}; its lease will expire", item.key(), e);
        }
        return outcome;
    }

    /**
     * Deferred: not acknowledged, not counted; backs off on the deferrals of the key in a row here,
     * or on the broker's own count when that is higher (a redelivery to another consumer).
     */
    private Outcome deferred(Prepared<T> item, String reason, Throwable cause) {
        int inRow = deferrals.next(item.key(), clock.instant());
        return new Outcome.Deferred(item.key(), reason, cause,
                backoff.delay(Math.max(inRow, item.envelope().brokerAttempt())));
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
            finish(round);
        } finally {
            round.lock.writeLock().unlock();
        }
    }

    /**
     * For a consumer that cannot go on: does not wait for messages still running, completes every key
     * whose outcome is known and releases those never started. A key whose handler is still running
     * (or crashed) keeps its claim until the lease expires, as after a process crash.
     */
    void abandon(Round<T> round) {
        finish(round);
    }

    /** A key whose outcome needs a completion: with the batch's, or at once if the batch was abandoned. */
    private void finished(Round<T> round, IdempotencyKey key) {
        List<IdempotencyKey> now;
        synchronized (round) {
            if (round.closed) {
                now = List.of(key);
            } else {
                long at = System.nanoTime();
                if (round.toComplete.isEmpty()) {
                    round.waitingSinceNanos = at;
                }
                round.toComplete.add(key);
                if (at - round.waitingSinceNanos < EAGER_COMPLETION.toNanos()) {
                    return;
                }
                // A long batch (an adapter may commit offsets as records finish) completes what
                // finished so far, so a crash later in the batch cannot leave them to run again.
                now = takeWaiting(round);
            }
        }
        complete(round, now);
    }

    /** Completes, and waits for, what this batch has finished so far. */
    private void completeWaiting(Round<T> round) {
        List<IdempotencyKey> now;
        synchronized (round) {
            now = takeWaiting(round);
        }
        if (!now.isEmpty()) {
            try {
                complete(round, now).get(COMPLETION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // Logged by complete; the keys stay claimed until their leases end.
            }
        }
    }

    private static <T> List<IdempotencyKey> takeWaiting(Round<T> round) {
        List<IdempotencyKey> now = List.copyOf(round.toComplete);
        round.toComplete.clear();
        return now;
    }

    /** A message stopped running; the last one out of an abandoned batch stops its renewal. */
    private void stopped(Round<T> round) {
        boolean idle;
        synchronized (round) {
            round.running--;
            idle = round.closed && round.running == 0;
        }
        if (idle) {
            renewer.forget(round.owner);
        }
    }

    private void finish(Round<T> round) {
        List<IdempotencyKey> done;
        List<IdempotencyKey> unstarted = new ArrayList<>();
        boolean idle;
        synchronized (round) {
            if (round.closed) {
                return;
            }
            round.closed = true;
            done = takeWaiting(round);
            round.claims.forEach((key, claim) -> {
                if (claim instanceof Claim.Claimed && !round.started.contains(key)) {
                    unstarted.add(key);
                }
            });
            idle = round.running == 0;
        }
        if (idle) {
            renewer.forget(round.owner);
        } else {
            // Messages still run (an abandon does not wait): keep renewing only theirs.
            unstarted.forEach(round.held::drop);
            done.forEach(round.held::drop);
        }
        try {
            if (!unstarted.isEmpty()) {
                claims.release(unstarted, round.owner);
            }
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {} unstarted claim(s); their leases will expire", unstarted.size(), e);
        }
        if (!done.isEmpty()) {
            complete(round, done);
        }
    }

    /**
     * Sends the completion of finished keys, not awaited, and tries once more if it fails (a Redis
     * blip must not leave finished keys to lapse and run again).
     */
    private CompletableFuture<Set<IdempotencyKey>> complete(Round<T> round, List<IdempotencyKey> done) {
        done.forEach(round.held::drop);
        // Known as completing before it is sent, so a claim meeting these keys busy waits for it.
        CompletableFuture<Void> landed = new CompletableFuture<>();
        completing.put(landed, done);
        Runnable settled = () -> {
            completing.remove(landed);
            landed.complete(null);
        };
        CompletableFuture<Set<IdempotencyKey>> sent;
        try {
            sent = claims.completeAsync(done, round.owner)
                    .exceptionallyCompose(first -> claims.completeAsync(done, round.owner));
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        } catch (Error e) {
            settled.run();
            throw e;
        }
        sent = sent.whenComplete((refused, error) -> {
            settled.run();
            if (error != null) {
                LOG.warn("could not record {} completion(s) after two tries; their leases will expire and "
                        + "only a business check will recognise the effects", done.size(), error);
            } else if (!refused.isEmpty()) {
                meters.leaseLost(refused.size());
                LOG.warn("{} completion(s) refused because their claims passed to another owner, e.g. {}",
                        refused.size(), refused.iterator().next());
            }
        });
        return sent;
    }

    /**
     * Waits, in all at most {@link #COMPLETION_WAIT}, for completions sent. Their failures were
     * logged where they happened; a late or failed completion only makes its keys look busy longer.
     */
    private static void awaitAll(Collection<CompletableFuture<Void>> completions) {
        long deadline = System.nanoTime() + COMPLETION_WAIT.toNanos();
        for (CompletableFuture<?> completion : completions) {
            try {
                completion.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                // See above.
            }
        }
    }

    @Override
    public void close() {
        awaitAll(List.copyOf(completing.keySet()));
        renewer.close();
    }
}
