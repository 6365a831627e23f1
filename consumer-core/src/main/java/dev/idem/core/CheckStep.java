package dev.idem.core;

import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Tracing;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Step 2e of a message's trip ({@link Protocol}): the business check asked, in a span of its own, and
 * what an effect it found means: a duplicate, or a dead letter whose compensation is to finish.
 *
 * @param <T> payload type
 */
final class CheckStep<T> {

    private final EffectLedger<? super T> dedupCheck;
    // False for DedupCheck.none(): nothing to ask, and no span for it.
    private final boolean checks;
    private final Tracing tracing;
    private final DeadLetterStep<T> deadLetterStep;
    private final Setbacks<T> setbacks;

    CheckStep(EffectLedger<? super T> dedupCheck, boolean checks, Tracing tracing, DeadLetterStep<T> deadLetterStep,
              Setbacks<T> setbacks) {
        this.dedupCheck = dedupCheck;
        this.checks = checks;
        this.tracing = tracing;
        this.deadLetterStep = deadLetterStep;
        this.setbacks = setbacks;
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
    Outcome foundApplied(Attempt<T> a, String reason) throws Exception {
        OptionalLong pending = dedupCheck.compensationPending(a.delivery());
        if (pending.isPresent()) {
            return deadLetterStep.recoverCompensation(a, pending.getAsLong());
        }
        return new Outcome.Duplicate(a.key(), reason);
    }

    /** Runs the business check again; a found effect completes the key as a duplicate. */
    Optional<Outcome> alreadyApplied(Attempt<T> a) {
        try {
            if (found(a.delivery())) {
                return Optional.of(foundApplied(a, "found by the business check after a failure"));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.of(setbacks.release(a.round, a.item, setbacks.deferred(a.item, "business check unavailable: "
                    + Failures.describe(e), e)));
        }
    }
}
