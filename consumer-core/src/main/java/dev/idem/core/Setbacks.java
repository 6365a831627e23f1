package dev.idem.core;

import org.jspecify.annotations.Nullable;
import dev.idem.core.internal.Deferrals;
import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Prepared;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a message's trip stops short without being its failure: deferred (not counted, backed off),
 * its claim handed back, or sent back busy because its lease passed to another owner.
 *
 * @param <T> payload type
 */
final class Setbacks<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Setbacks.class);
    // A busy key comes back when its lease ends, the earliest moment it can be ours. Retrying sooner
    // only spends the broker's redelivery count.
    static final Duration BUSY_RETRY_MIN = Duration.ofMillis(50);

    private final ClaimStore claims;
    private final Deferrals deferrals;
    private final Backoff backoff;
    private final Failures failures;
    private final Clock clock;
    private final Meters meters;

    Setbacks(ClaimStore claims, Deferrals deferrals, Backoff backoff, Failures failures, Clock clock, Meters meters) {
        this.claims = claims;
        this.deferrals = deferrals;
        this.backoff = backoff;
        this.failures = failures;
        this.clock = clock;
        this.meters = meters;
    }

    /** Not started: the key's lease passed to another owner. Sent back busy. */
    Outcome leaseLost(IdempotencyKey key) {
        meters.leaseLost(1);
        LOG.warn("{} not started: its lease passed to another owner", key);
        return new Outcome.Busy(key, BUSY_RETRY_MIN);
    }

    /**
     * How long the key has met infrastructure trouble in a row, empty when {@code failure} is not
     * infrastructure trouble. The business check's own store failing is never bounded (zero):
     * nothing is known about the key.
     */
    Optional<Duration> troubleAge(IdempotencyKey key, Throwable failure) {
        if (!failures.isInfrastructure(failure)) {
            return Optional.empty();
        }
        return Optional.of(Failures.isCheckUnavailable(failure) ? Duration.ZERO
                : deferrals.handlerTrouble(key, clock.instant()));
    }

    /** Hands a claim back uncounted (infrastructure trouble: not the message's fault). */
    Outcome release(Round<T> round, Prepared<T> item, Outcome outcome) {
        return release(round, item, outcome, false);
    }

    /**
     * Hands a claim back; one taken over from a crashed owner ({@code crashed}) is left abandoned, so
     * the next claim takes it over and counts its run: a store that failed to count before the handler
     * cannot erase the crash.
     */
    Outcome release(Round<T> round, Prepared<T> item, Outcome outcome, boolean crashed) {
        try {
            round.held.drop(item.key());
            claims.release(List.of(item.key()), crashed ? Set.of(item.key()) : Set.of(), round.owner);
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {}; its lease will expire", item.key(), e);
        }
        return outcome;
    }

    /**
     * Deferred: not acknowledged, not counted; backs off on the deferrals of the key in a row here,
     * or on the broker's own count when that is higher (a redelivery to another consumer).
     */
    Outcome deferred(Prepared<T> item, String reason, @Nullable Throwable cause) {
        int inRow = deferrals.next(item.key(), clock.instant());
        return new Outcome.Deferred(item.key(), reason, cause,
                backoff.delay(Math.max(inRow, item.envelope().brokerAttempt())));
    }
}
