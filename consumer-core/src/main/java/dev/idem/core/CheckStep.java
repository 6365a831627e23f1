package dev.idem.core;

import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
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
    Outcome foundApplied(Round<T> round, Prepared<T> item, Claim.Claimed claimed, Delivery<T> delivery,
                         String reason) throws Exception {
        OptionalLong pending = dedupCheck.compensationPending(delivery);
        if (pending.isPresent()) {
            return deadLetterStep.recoverCompensation(round, item, claimed, pending.getAsLong());
        }
        return new Outcome.Duplicate(item.key(), reason);
    }

    /** Runs the business check again; a found effect completes the key as a duplicate. */
    Optional<Outcome> alreadyApplied(Round<T> round, Prepared<T> item, Claim.Claimed claimed,
                                     Delivery<T> delivery) {
        try {
            if (found(delivery)) {
                return Optional.of(foundApplied(round, item, claimed, delivery,
                        "found by the business check after a failure"));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.of(setbacks.release(round, item, setbacks.deferred(item, "business check unavailable: "
                    + Failures.describe(e), e)));
        }
    }
}
