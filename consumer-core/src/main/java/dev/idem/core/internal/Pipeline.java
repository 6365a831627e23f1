package dev.idem.core.internal;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.DuplicateEffectException;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Outcome;
import dev.idem.core.Backoff;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.Compensation;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.core.DedupCheck;
import dev.idem.core.spi.FailureCount;
import dev.idem.core.HandlerInterceptor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The fixed processing order of DESIGN §2, for one claimed message: check the claim, run the
 * business dedup check, invoke the handler, then settle (done, retry, or dead letter and
 * compensation). Users cannot reorder it. Immutable and thread-safe.
 *
 * @param <T> payload type
 */
public final class Pipeline<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Pipeline.class);
    // A busy key comes back when its lease ends, the earliest moment it can be ours: a live owner's
    // duplicate loses nothing by waiting, and a dead owner's claim is taken over then. Retrying
    // sooner only spends the broker's redelivery count (RocketMQ dead-letters on its own at its limit).
    private static final Duration BUSY_RETRY_MIN = Duration.ofMillis(50);

    /** Settings for a pipeline, validated by the processor's builder. */
    public record Settings<T>(String group, ClaimStore claims, DedupCheck<? super T> dedupCheck,
                              DeliveryHandler<T> handler, HandlerInterceptor interceptor, PayloadCodec<T> codec,
                              KeySource<T> keys, int maxAttempts, Backoff backoff, Failures failures,
                              DeadLetterPublisher deadLetters, Compensation compensation, int compensationAttempts,
                              Clock clock, ProcessorMetrics metrics) {
    }

    private final Settings<T> s;
    private final AtomicBoolean storeDown = new AtomicBoolean();

    /** @param settings validated settings */
    public Pipeline(Settings<T> settings) {
        this.s = settings;
    }

    /** Extracts the key and decodes the payload; never throws: defects travel with the message. */
    public Prepared<T> prepare(Envelope envelope) {
        IdempotencyKey fallback = new IdempotencyKey(s.group(), envelope.topic(), envelope.messageId());
        T payload;
        try {
            payload = s.codec().decode(envelope.body());
        } catch (Exception | LinkageError e) {
            String key = keyOrNull(envelope, null);
            return new Prepared<>(envelope, key == null ? fallback : key(envelope, key), null,
                    "undecodable payload: " + Failures.describe(e), e);
        }
        String key = keyOrNull(envelope, payload);
        if (key == null) {
            return new Prepared<>(envelope, fallback, null, "no idempotency key", null);
        }
        return new Prepared<>(envelope, key(envelope, key), payload, null, null);
    }

    private String keyOrNull(Envelope envelope, T payload) {
        try {
            String key = s.keys().keyOf(envelope, payload);
            return key == null || key.isBlank() || key.length() > IdempotencyKey.MAX_VALUE_LENGTH ? null : key;
        } catch (RuntimeException e) {
            // A payload key function given no payload (undecodable body) or a bad payload: no key.
            return null;
        }
    }

    private IdempotencyKey key(Envelope envelope, String value) {
        return new IdempotencyKey(s.group(), envelope.topic(), value);
    }

    /** Claims keys in one call; a store failure is logged once per outage and rethrown. */
    public List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease, boolean firm) {
        try {
            List<Claim> claims = s.metrics().claimTimer().record(() -> s.claims().claim(requests, owner, lease, firm));
            if (storeDown.compareAndSet(true, false)) {
                LOG.info("claim store reachable again; processing resumes");
            }
            return claims;
        } catch (ClaimStoreException e) {
            s.metrics().storeUnavailable();
            if (storeDown.compareAndSet(false, true)) {
                LOG.error("claim store unreachable; failing closed: nothing is acknowledged until it answers", e);
            }
            throw e;
        }
    }

    /** The outcome for a message whose claim could not be taken because the store is down. */
    public Outcome unavailable(Prepared<T> item, ClaimStoreException cause) {
        return record(item, new Outcome.Deferred(item.key(), "claim store unavailable", cause, deferral(item)));
    }

    /** Backoff for a deferral: grows with the broker's own count, so an outage does not spend it fast. */
    private Duration deferral(Prepared<T> item) {
        return s.backoff().delay(Math.max(1, item.envelope().brokerAttempt()));
    }

    /**
     * Runs one claimed message through the fixed order.
     *
     * @param firm       whether the claim already counted this attempt
     * @param leaseLost  tells whether the lease was lost while the message was held
     * @param completion marks the key done (now or with the rest of its batch)
     */
    public Outcome run(Prepared<T> item, Claim claim, String owner, boolean firm,
                       Predicate<IdempotencyKey> leaseLost,
                       Consumer<IdempotencyKey> completion) {
        IdempotencyKey key = item.key();
        MDC.put("idem.key", key.value());
        MDC.put("idem.topic", key.topic());
        try {
            return record(item, settle(item, claim, owner, firm, leaseLost, completion));
        } finally {
            MDC.remove("idem.key");
            MDC.remove("idem.topic");
            MDC.remove("idem.attempt");
        }
    }

    private Outcome settle(Prepared<T> item, Claim claim, String owner, boolean firm,
                           Predicate<IdempotencyKey> leaseLost,
                           Consumer<IdempotencyKey> completion) {
        IdempotencyKey key = item.key();
        // 1. The claim: someone else's, settled earlier, or ours.
        if (claim instanceof Claim.Done) {
            return new Outcome.Duplicate(key, "recorded as done in the claim store");
        }
        if (claim instanceof Claim.Dead) {
            return new Outcome.DeadLettered(key, 0, "dead-lettered by an earlier delivery", true);
        }
        if (claim instanceof Claim.Busy busy) {
            return new Outcome.Busy(key, clamp(busy.remaining()));
        }
        Claim.Claimed claimed = (Claim.Claimed) claim;
        int attempt = claimed.attempt();
        MDC.put("idem.attempt", Integer.toString(attempt));
        try {
            if (claimed.suspect() && !firm && !s.claims().start(key, owner)) {
                return new Outcome.Busy(key, BUSY_RETRY_MIN);
            }
        } catch (ClaimStoreException e) {
            return new Outcome.Deferred(key, "claim store unavailable", e, deferral(item));
        }
        if (attempt > s.maxAttempts()) {
            return deadLetter(item, claimed, owner, attempt - 1, "attempts exhausted: the handler started "
                    + (attempt - 1) + " times without finishing (the process crashed)", null);
        }
        if (item.defect() != null) {
            return deadLetter(item, claimed, owner, attempt - 1, item.defect(), item.defectCause());
        }

        Delivery<T> delivery = new Delivery<>(key, claimed.fence(), attempt, item.envelope(), item.payload());
        try {
            // 2. The business dedup check: the system of record has the last word.
            if (s.dedupCheck().alreadyApplied(delivery)) {
                completion.accept(key);
                return new Outcome.Duplicate(key, "found by the business check");
            }
            // 3. The handler, through the interceptor slot.
            s.metrics().handlerTimer().recordCallable(() -> {
                s.interceptor().intercept(delivery, () -> s.handler().handle(delivery));
                return null;
            });
        } catch (DuplicateEffectException e) {
            completion.accept(key);
            return new Outcome.Duplicate(key, "refused by the system of record: " + e.getMessage());
        } catch (Exception e) {
            // 5. and 6. Failure: retry, or dead letter when fatal or the last attempt.
            return failed(item, claimed, owner, e);
        }
        // 4. Success.
        completion.accept(key);
        return new Outcome.Applied(key, claimed.fence(), attempt, leaseLost.test(key));
    }

    private Outcome failed(Prepared<T> item, Claim.Claimed claimed, String owner, Exception failure) {
        IdempotencyKey key = item.key();
        if (s.failures().isFatal(failure)) {
            return deadLetter(item, claimed, owner, claimed.attempt(), "non-retryable failure", failure);
        }
        if (claimed.attempt() >= s.maxAttempts()) {
            return deadLetter(item, claimed, owner, claimed.attempt(), "attempts exhausted", failure);
        }
        try {
            Optional<FailureCount> count = s.claims().fail(key, owner, Failures.describe(failure));
            int attempts = count.map(FailureCount::attempts).orElse(claimed.attempt());
            LOG.warn("attempt {} of {} failed for {}; redelivering", attempts, s.maxAttempts(), key, failure);
            return new Outcome.Retrying(key, attempts, failure, s.backoff().delay(attempts));
        } catch (ClaimStoreException e) {
            LOG.warn("attempt {} failed for {} and could not be counted (claim store unavailable)",
                    claimed.attempt(), key, failure);
            return new Outcome.Deferred(key, "claim store unavailable", e, s.backoff().delay(claimed.attempt()));
        }
    }

    private Outcome deadLetter(Prepared<T> item, Claim.Claimed claimed, String owner, int attempts, String reason,
                               Throwable cause) {
        IdempotencyKey key = item.key();
        Instant now = s.clock().instant();
        String exceptionClass = cause == null ? "" : cause.getClass().getName();
        DeadLetter deadLetter = new DeadLetter(key, item.envelope(), attempts, reason, exceptionClass,
                Failures.message(cause), Failures.stackTrace(cause), claimed.firstFailureAt().orElse(now), now);
        try {
            s.deadLetters().publish(deadLetter);
        } catch (Exception e) {
            s.metrics().publishFailed();
            Duration delay = s.backoff().delay(Math.max(1, attempts));
            LOG.error("could not publish the dead letter for {} ({}); not acknowledging, retrying in {}",
                    key, reason, delay, e);
            releaseAfterUnpublished(key, owner, cause);
            return new Outcome.Deferred(key, "dead-letter publish failed", e, delay);
        }
        LOG.error("dead-lettered {} after {} attempt(s): {}", key, attempts, reason, cause);
        if (markDead(key, owner, cause)) {
            compensate(deadLetter);
        }
        return new Outcome.DeadLettered(key, attempts, reason, false);
    }

    private void releaseAfterUnpublished(IdempotencyKey key, String owner, Throwable cause) {
        try {
            // Count the handler failure so the next delivery goes straight to the dead letter.
            if (cause != null) {
                s.claims().fail(key, owner, Failures.describe(cause));
            } else {
                s.claims().release(List.of(key), owner);
            }
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {} after the failed dead-letter publish; its lease will expire", key, e);
        }
    }

    private boolean markDead(IdempotencyKey key, String owner, Throwable cause) {
        try {
            if (s.claims().deadLetter(key, owner, Failures.describe(cause))) {
                return true;
            }
            LOG.warn("dead letter for {} published, but its claim had passed to another owner; "
                    + "compensation is left to that owner", key);
            return false;
        } catch (ClaimStoreException e) {
            // The dead letter is out and the source will be acknowledged: compensate now or never.
            LOG.warn("dead letter for {} published, but the claim store did not record it", key, e);
            return true;
        }
    }

    private void compensate(DeadLetter deadLetter) {
        Exception last = null;
        for (int i = 1; i <= s.compensationAttempts(); i++) {
            try {
                s.compensation().compensate(deadLetter);
                recordCompensation(deadLetter.key(), "ok");
                return;
            } catch (Exception e) {
                last = e;
            }
        }
        s.metrics().compensationFailed();
        LOG.error("compensation for {} failed {} time(s); it will not run again", deadLetter.key(),
                s.compensationAttempts(), last);
        recordCompensation(deadLetter.key(), "failed: " + Failures.describe(last));
    }

    private void recordCompensation(IdempotencyKey key, String outcome) {
        try {
            s.claims().recordCompensation(key, outcome);
        } catch (ClaimStoreException e) {
            LOG.warn("compensation outcome '{}' for {} could not be recorded", outcome, key, e);
        }
    }

    private Outcome record(Prepared<T> item, Outcome outcome) {
        s.metrics().outcome(item.envelope().topic(), outcome);
        return outcome;
    }

    private static Duration clamp(Duration remaining) {
        return remaining.compareTo(BUSY_RETRY_MIN) < 0 ? BUSY_RETRY_MIN : remaining;
    }
}
