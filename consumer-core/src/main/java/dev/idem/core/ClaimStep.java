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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
    private final Completions<T> completions;
    private final Meters meters;
    private final Ticker ticker;
    private final String instance = UUID.randomUUID().toString().substring(0, 13);
    private final AtomicLong owners = new AtomicLong();
    private final AtomicBoolean storeDown = new AtomicBoolean();

    ClaimStep(Preparation<T> preparation, ClaimStore claims, Duration lease, LeaseRenewer renewer,
              Completions<T> completions, Meters meters, Ticker ticker) {
        this.preparation = preparation;
        this.claims = claims;
        this.lease = lease;
        this.renewer = renewer;
        this.completions = completions;
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
        Map<IdempotencyKey, Claim> answers = new HashMap<>(requests.size() * 2);
        ClaimStoreException failure = null;
        long claimedAt = ticker.nanos();
        try {
            for (Claim claim : claimAll(List.copyOf(requests.values()), owner)) {
                answers.put(claim.key(), claim);
            }
            completions.claimAgainAfterOwnCompletions(requests, answers, again -> claimAll(again, owner));
        } catch (ClaimStoreException e) {
            failure = e;
        }
        List<IdempotencyKey> held = answers.values().stream()
                .filter(c -> c instanceof Claim.Claimed || c instanceof Claim.Compensate).map(Claim::key).toList();
        return new Round<>(owner, items, answers, failure, renewer.hold(owner, held, claimedAt), span);
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
}
