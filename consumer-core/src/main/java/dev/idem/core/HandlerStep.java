package dev.idem.core;

import dev.idem.core.internal.CurrentRun;
import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Tracing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 2f of {@link Protocol}: the handler, through the interceptor slot, while the lease is renewed.
 * Applied; or refused by the system of record, which is the business check's answer; or failed, which
 * the protocol hands to {@link FailureStep}. Thread-safe (no state of its own).
 *
 * @param <T> payload type
 */
final class HandlerStep<T> {

    // Its lines are the protocol's.
    private static final Logger LOG = LoggerFactory.getLogger(Protocol.class);

    private final DeliveryHandler<T> handler;
    private final HandlerInterceptor interceptor;
    private final Meters meters;
    private final Tracing tracing;

    HandlerStep(ProcessorConfig<T> c, Meters meters, Tracing tracing) {
        this.handler = c.handler();
        this.interceptor = c.interceptor();
        this.meters = meters;
        this.tracing = tracing;
    }

    /** Applied ({@link Next.Settled}), refused by the system of record, or failed; a crash is thrown. */
    Next run(Attempt<T> a) {
        Delivery<T> delivery = a.delivery();
        IdempotencyKey key = a.key();
        Tracing.Step handlerSpan = tracing.step("idem handler");
        // What the handler sends through the outbox gets ids derived from this run.
        CurrentRun outer = CurrentRun.enter(key);
        try {
            meters.handler(() -> {
                call(delivery);
                return null;
            });
        } catch (Exception | Error e) {
            DuplicateEffectException refused = Failures.refusal(e);
            (refused != null ? handlerSpan.attribute("idem.refused", true) : handlerSpan.failed(e)).close();
            if (refused != null) {
                // Refused by the system of record, also when an interceptor wrapped the refusal.
                return new Next.Refused(refused);
            }
            if (e instanceof Error error && Failures.isCrash(error)) {
                // The process cannot go on: leave the claim as a crash would (its lease expires and
                // the next run is counted).
                throw error;
            }
            return new Next.Failed(e);
        } finally {
            CurrentRun.leave(outer);
        }
        handlerSpan.close();
        boolean leaseLost = a.round.held.lost(key) || a.round.held.mayHaveExpired(key);
        if (leaseLost) {
            meters.leaseLost(1);
            LOG.warn("{} applied, but its lease may have passed to another owner while the handler ran; the "
                    + "business check is what keeps the effect single", key);
        }
        return new Next.Settled(new Outcome.Applied(key, a.claimed.fence(), a.claimed.attempt(), leaseLost));
    }

    /**
     * The handler, through the interceptor when there is one; without one it is called directly, as the
     * once-only wrapper an interceptor gets cost three objects per message.
     */
    private void call(Delivery<T> delivery) throws Exception {
        if (interceptor == NoInterceptor.INSTANCE) {
            handler.handle(delivery);
        } else {
            interceptor.intercept(delivery, new OnceProceed(() -> handler.handle(delivery)));
        }
    }
}
