package dev.idem.core;

import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Prepared;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.FailureCount;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After step 2f of a message's trip ({@link Protocol}): what a handler's failure comes to.
 * Infrastructure trouble within {@code maxDeferral} is deferred and not counted; a fatal failure or
 * the last attempt is for the dead letter ({@link Next.Doom}: the protocol gives the business check
 * a last look first, in case the effect committed after all); anything else is counted in the claim
 * store and retried after the backoff. Thread-safe.
 *
 * @param <T> payload type
 */
final class FailureStep<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Protocol.class);

    private final ClaimStore claims;
    private final Failures failures;
    private final int maxAttempts;
    private final Duration maxDeferral;
    private final Backoff backoff;
    private final Setbacks<T> setbacks;

    FailureStep(ProcessorConfig<T> c, ClaimStore claims, Failures failures, Setbacks<T> setbacks) {
        this.claims = claims;
        this.failures = failures;
        this.maxAttempts = c.maxAttempts();
        this.maxDeferral = c.maxDeferral();
        this.backoff = c.backoff();
        this.setbacks = setbacks;
    }

    Next failed(Attempt<T> a, Throwable failure) {
        Round<T> round = a.round;
        Prepared<T> item = a.item;
        Claim.Claimed claimed = a.claimed;
        IdempotencyKey key = item.key();
        Optional<Duration> trouble = setbacks.troubleAge(key, failure);
        if (trouble.isPresent()) {
            Duration age = trouble.get();
            if (age.compareTo(maxDeferral) <= 0) {
                LOG.warn("attempt {} of {} met infrastructure trouble; deferring, not counting it", claimed.attempt(),
                        key, failure);
                return new Next.Settled(setbacks.release(round, item, setbacks.deferred(item,
                        "infrastructure unavailable: " + Failures.describe(failure), failure)));
            }
            // Trouble that outlasts the bound is the message's own (a host that is gone, a request
            // that can never succeed): counted, so it ends in the dead letter instead of blocking.
            LOG.warn("{} has met infrastructure trouble for {}, longer than maxDeferral ({}); counting it as a failure",
                    key, age, maxDeferral);
        }
        boolean fatal = failures.isFatal(failure);
        if (fatal || claimed.attempt() >= maxAttempts) {
            // The transaction may have committed although the handler threw (a lost commit reply): the
            // business check has a last look first.
            return new Next.Doom(claimed.attempt(), fatal ? "non-retryable failure" : "attempts exhausted", null,
                    failure);
        }
        try {
            round.held.drop(key);   // given up now: a renewal under way will not find it, and that is no loss
            Optional<FailureCount> count = claims.fail(key, round.owner, Failures.describe(failure));
            int attempts = count.map(FailureCount::attempts).orElse(claimed.attempt());
            LOG.warn("attempt {} of {} failed for {}; redelivering", attempts, maxAttempts, key, failure);
            return new Next.Settled(new Outcome.Retrying(key, attempts, failure, backoff.delay(attempts)));
        } catch (ClaimStoreException e) {
            LOG.warn("attempt {} failed for {} and could not be counted (claim store unavailable)",
                    claimed.attempt(), key, failure);
            return new Next.Settled(setbacks.deferred(item, "claim store unavailable", e));
        }
    }
}
