package dev.idem.core;

import dev.idem.core.spi.ClaimStore;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link IdempotentProcessor.Builder#build()} checks before it builds: each setting on its own,
 * then the combinations no single setter can see, each refusing what would silently break a promise,
 * naming the settings involved.
 */
final class BuilderChecks {

    private static final Logger LOG = LoggerFactory.getLogger(BuilderChecks.class);
    // Backoffs may add jitter: the span is taken from the largest of this many samples per attempt.
    private static final int BACKOFF_SAMPLES = 16;

    private BuilderChecks() {
    }

    static void check(IdempotentProcessor.Builder<?> b) {
        each(b);
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
        EffectLedger<?> ledger = EffectLedger.of(ProcessorConfig.set(b.dedupCheck));
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

    /** Each setting on its own. */
    private static void each(IdempotentProcessor.Builder<?> b) {
        if (b.group == null || b.group.isBlank()) {
            throw new IllegalArgumentException("group must not be blank but was '" + b.group + "'");
        }
        required("claims", b.claims);
        required("dedupCheck", b.dedupCheck);
        required("deadLetters", b.deadLetters);
        required("codec", b.codec);
        required("keys", b.keys);
        required("compensation", b.compensation);
        required("interceptor", b.interceptor);
        required("backoff", b.backoff);
        required("clock", b.clock);
        required("ticker", b.ticker);
        required("onOutcome", b.onOutcome);
        required("traceKeys", b.traceKeys);
        required("handler", b.handler);
        if (b.maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1 but was " + b.maxAttempts);
        }
        if (b.compensationAttempts < 1) {
            throw new IllegalArgumentException("compensationAttempts must be >= 1 but was " + b.compensationAttempts);
        }
        if (b.maxDeferral == null || b.maxDeferral.isNegative()) {
            throw new IllegalArgumentException("maxDeferral must be >= 0 but was " + b.maxDeferral);
        }
        if (b.lease == null || b.lease.toMillis() < 100) {
            throw new IllegalArgumentException("lease must be >= 100ms but was " + b.lease);
        }
    }

    private static void required(String name, @Nullable Object value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is required but was not set");
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
