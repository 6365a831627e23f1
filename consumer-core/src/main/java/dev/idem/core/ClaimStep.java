package dev.idem.core;

import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 1 of a message's trip ({@link Protocol}): decode each message of a batch and find its key,
 * claim every key in one round trip under a fresh owner token, and hold the claims (their leases are
 * renewed until the batch closes). A store that does not answer is logged once per outage; the
 * batch then carries the failure and every message of it is deferred. Thread-safe.
 *
 * @param <T> payload type
 */
final class ClaimStep<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Protocol.class);

    private final Preparation<T> preparation;
    private final ClaimStore claims;
    private final Duration lease;
    private final LeaseRenewer renewer;
    private final HeldHere heldHere;
    private final Meters meters;
    private final Ticker ticker;
    private final String instance = UUID.randomUUID().toString().substring(0, 13);
    private final AtomicLong owners = new AtomicLong();
    private final AtomicBoolean storeDown = new AtomicBoolean();

    ClaimStep(Preparation<T> preparation, ClaimStore claims, Duration lease, LeaseRenewer renewer,
              HeldHere heldHere, Meters meters, Ticker ticker) {
        this.preparation = preparation;
        this.claims = claims;
        this.lease = lease;
        this.renewer = renewer;
        this.heldHere = heldHere;
        this.meters = meters;
        this.ticker = ticker;
    }

    Round<T> open(List<Envelope> envelopes, Tracing.Step span) {
        List<Prepared<T>> items = new ArrayList<>(envelopes.size());
        Map<IdempotencyKey, ClaimRequest> requests = new LinkedHashMap<>(envelopes.size() * 2);
        for (Envelope envelope : envelopes) {
            Prepared<T> item = preparation.prepare(envelope);
            items.add(item);
            requests.putIfAbsent(item.key(), new ClaimRequest(item.key(), envelope.brokerAttempt(), envelope.timestamp()));
        }
        String owner = instance + "-" + owners.incrementAndGet();
        Opening opening = heldHere.opening(requests.keySet());
        try {
            // Concurrent: a key asked again when its message runs is answered into it.
            Map<IdempotencyKey, Claim> answers = new ConcurrentHashMap<>(requests.size() * 2);
            Set<IdempotencyKey> askAgain = Set.of();
            ClaimStoreException failure = null;
            long claimedAt = ticker.nanos();
            long seen = heldHere.settlements();
            try {
                for (Claim claim : claimAll(List.copyOf(requests.values()), owner)) {
                    answers.put(claim.key(), claim);
                }
                askAgain = heldHere.claimAgainAfterOwnCompletions(opening, seen, requests, answers,
                        again -> claimAll(again, owner));
            } catch (ClaimStoreException e) {
                failure = e;
            }
            List<IdempotencyKey> held = answers.values().stream()
                    .filter(Claim::held).map(Claim::key).toList();
            Round<T> round = new Round<>(owner, items, answers, failure, renewer.hold(owner, held, claimedAt), span,
                    opening, askAgain);
            heldHere.opened(opening, round);
            return round;
        } catch (RuntimeException | Error e) {
            heldHere.notOpened(opening);
            throw e;
        }
    }

    /**
     * The claim a message runs under: its batch's answer, or, for a key that was busy at the batch's
     * claim because another batch of this processor held it, a claim made now
     * ({@link HeldHere#askAgain}); a store failure then leaves it busy.
     */
    Claim claimOf(Round<T> round, Prepared<T> item) {
        IdempotencyKey key = item.key();
        Claim answer = Objects.requireNonNull(round.claims.get(key), "the batch's claim answered every key");
        if (!(answer instanceof Claim.Busy) || !round.askAgain.contains(key)) {
            return answer;
        }
        long sentAt = ticker.nanos();
        Claim claim;
        try {
            claim = heldHere.askAgain(round.opening,
                    new ClaimRequest(key, item.envelope().brokerAttempt(), item.envelope().timestamp()),
                    again -> claimAll(again, round.owner));
        } catch (ClaimStoreException e) {
            round.askAgain.remove(key);
            return answer;
        }
        if (claim.held()) {
            round.held.add(key);
            round.held.confirmed(key, sentAt);
        }
        round.claims.put(key, claim);
        round.askAgain.remove(key);
        return claim;
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

    /** Step 2d: counts the takeover of a key, confirming its lease; false if it is no longer ours. */
    boolean count(Round<T> round, IdempotencyKey key) {
        long sentAt = ticker.nanos();
        if (!claims.count(key, round.owner, lease)) {
            return false;
        }
        round.held.confirmed(key, sentAt);
        return true;
    }

    /** Renews one held key now; false if it is no longer ours (or the store cannot tell). */
    boolean stillOurs(Round<T> round, IdempotencyKey key) {
        long sentAt = ticker.nanos();
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
}
