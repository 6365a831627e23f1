package dev.idem.core;

import dev.idem.core.spi.ClaimStore;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The checks across a processor's settings that no single setter can make: each refuses a
 * combination that would silently break a promise, naming the settings involved.
 */
final class Settings {

    private static final Logger LOG = LoggerFactory.getLogger(Settings.class);
    // Backoffs may add jitter: the span is taken from the largest of this many samples per attempt.
    private static final int BACKOFF_SAMPLES = 16;

    private Settings() {
    }

    static void check(IdempotentProcessor.Builder<?> b) {
        Duration span = backoffSpan(b.backoff, b.maxAttempts);
        // Failure counts must outlive the retries, or a poison message's count expires between two
        // attempts and it is retried for ever.
        Duration needed = span.plus(b.lease.multipliedBy(b.maxAttempts));
        ClaimStore claims = ProcessorConfig.claimsOf(b);
        if (claims.attemptsWindow().compareTo(needed) < 0) {
            throw new IllegalArgumentException("the claim store's attemptsWindow (" + claims.attemptsWindow()
                    + ") must cover the backoff between maxAttempts (" + b.maxAttempts + ") attempts plus a lease each ("
                    + needed + "): raise attemptsWindow or shorten backoff");
        }
        // A guarded processor's done keys may lapse before failure counts do: its ledger keeps them single.
        if (claims == b.claims && claims.doneWindow().compareTo(claims.attemptsWindow()) < 0) {
            throw new IllegalArgumentException("the claim store's doneWindow (" + claims.doneWindow()
                    + ") must be >= its attemptsWindow (" + claims.attemptsWindow() + ")");
        }
        EffectLedger<?> ledger = EffectLedger.of(b.dedupCheck);
        ledger.retention().ifPresent(retention -> {
            if (retention.compareTo(claims.doneWindow()) < 0) {
                throw new IllegalArgumentException("the business check's retention (" + retention
                        + ") must be >= the claim store's doneWindow (" + claims.doneWindow()
                        + "): the guarantee must outlive the fast path");
            }
        });
        if (!ledger.recordedBy(b.handler)) {
            throw new IllegalArgumentException("dedupCheck looks for effects that the handler never records: "
                    + "build the processor with ledger.processor((delivery, transaction) -> ...) so the effect "
                    + "and its ledger row commit together");
        }
        if (b.dedupCheck == DedupCheck.none()) {
            LOG.warn("processor for group '{}' runs with DedupCheck.none(): no two handlers for one key run at once "
                    + "and a finished key is not run again only as long as Redis keeps its data; a Redis failover "
                    + "or restart that loses writes can apply an effect twice. Use a business check (the JDBC "
                    + "ledger, a unique key, a state guard) where that matters.", b.group);
        }
    }

    /** The longest time a message's retries can take, with jitter; checks the backoff on the way. */
    static Duration backoffSpan(Backoff backoff, int maxAttempts) {
        Duration span = Duration.ZERO;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            Duration longest = Duration.ZERO;
            for (int i = 0; i < BACKOFF_SAMPLES; i++) {
                Duration delay;
                try {
                    delay = backoff.delay(attempt);
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("backoff failed for attempt " + attempt + ": " + e, e);
                }
                if (delay == null || delay.isNegative()) {
                    throw new IllegalArgumentException("backoff must give a delay >= 0 but gave " + delay
                            + " for attempt " + attempt);
                }
                longest = delay.compareTo(longest) > 0 ? delay : longest;
            }
            if (attempt < maxAttempts) {
                span = span.plus(longest);
            }
        }
        return span;
    }
}
