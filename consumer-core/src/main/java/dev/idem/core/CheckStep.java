package dev.idem.core;

import dev.idem.core.internal.Tracing;
import java.util.OptionalLong;

/**
 * Step 2e of a message's trip ({@link Protocol}): the business check asked, in a span of its own, and
 * what an effect it found means: a duplicate, or a dead letter whose compensation is to finish
 * ({@link Next.Recover}).
 *
 * @param <T> payload type
 */
final class CheckStep<T> {

    private final EffectLedger<? super T> dedupCheck;
    // False for DedupCheck.none(): nothing to ask, and no span for it.
    private final boolean checks;
    private final Tracing tracing;

    CheckStep(EffectLedger<? super T> dedupCheck, boolean checks, Tracing tracing) {
        this.dedupCheck = dedupCheck;
        this.checks = checks;
        this.tracing = tracing;
    }

    /** The business check, in its own span. */
    boolean found(Delivery<T> delivery) throws Exception {
        if (!checks) {
            return false;
        }
        Tracing.Step span = tracing.step("idem check");
        try {
            boolean found = dedupCheck.alreadyApplied(delivery);
            span.attribute("idem.found", found);
            return found;
        } catch (Exception | Error e) {
            span.failed(e);
            throw e;
        } finally {
            span.close();
        }
    }

    /** The system of record has the key: a duplicate, or a dead letter whose compensation is to finish. */
    Next foundApplied(Attempt<T> a, String reason) throws Exception {
        OptionalLong pending = dedupCheck.compensationPending(a.delivery());
        if (pending.isPresent()) {
            return new Next.Recover(pending.getAsLong());
        }
        return new Next.Settled(new Outcome.Duplicate(a.key(), reason));
    }
}
