package dev.idem.core;

import dev.idem.core.spi.CompensationOutcome;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A system of record that is more than a dedup check: it keeps what the processor tells it of dead
 * letters and compensations, so that a Redis loss neither repeats a dead letter nor loses a
 * compensation, and it may say how its handler cooperates with it. {@link
 * dev.idem.core.jdbc.JdbcEffectLedger} is one; a plain {@link DedupCheck} gets every default here
 * (the claim store alone remembers dead letters). Implementations are thread-safe.
 *
 * @param <T> payload type
 */
public interface EffectLedger<T> extends DedupCheck<T> {

    /**
     * Whether {@code handler} records its effects where this ledger looks. A ledger that needs the
     * handler's cooperation (the JDBC ledger) answers false for a handler it does not wrap, so the
     * processor refuses to build instead of running on Redis alone. Default: true.
     */
    default boolean recordedBy(DeliveryHandler<?> handler) {
        return true;
    }

    /**
     * Whether {@code handler} refuses, by itself, every delivery this check would find: it throws
     * {@link DuplicateEffectException} before it has any effect (the JDBC ledger's transactional
     * handler inserts its row first, and the row's unique key refuses a second one, even from a
     * concurrent run). The processor then does not ask {@link #alreadyApplied} before the handler,
     * which saves a query per message; when the handler refuses, it asks
     * {@link #compensationPending} as it would after the check. A check that delegates to another
     * must not forward this if its own {@link #alreadyApplied} looks at more than the delegate does.
     * Default: false.
     */
    default boolean refusesDuplicates(DeliveryHandler<?> handler) {
        return false;
    }

    /**
     * Remembers, in the system of record, that a key was dead-lettered, so that a redelivery after
     * the claim store lost its record is found here ({@link #alreadyApplied} answers true) and never
     * runs, dead-letters or compensates again. Called after the dead letter is published and before
     * the compensation runs; after a throw the key is marked dead all the same (the letter is never
     * published again for it), the message is not acknowledged, and the delivery that takes the
     * compensation over runs it and records it with {@link #compensated}. Default: nothing, the
     * claim store alone remembers.
     *
     * @throws Exception if the system of record cannot be written
     */
    default void deadLettered(DeadLetter deadLetter) throws Exception {
    }

    /**
     * The fence of this key's dead-lettering recorded here ({@link #deadLettered}) while no
     * compensation outcome is recorded for it ({@link #compensated}); empty when there is none. Asked
     * when {@link #alreadyApplied} answered true, or the handler refused the delivery with a
     * {@link DuplicateEffectException}, for a key the claim store had no finished record of: the
     * processor then finishes the compensation, once, so a Redis loss between the dead letter and its
     * compensation does not lose it; and when a compensation cut off by a crash is taken over. The
     * fence names the dead-lettering ({@link DeadLetter#compensationId()}), so the compensation keeps
     * its id after the claim store lost its record. Default: empty.
     *
     * @throws Exception if the system of record cannot answer: the delivery is deferred
     */
    default OptionalLong compensationPending(Delivery<? extends T> delivery) throws Exception {
        return OptionalLong.empty();
    }

    /**
     * Remembers that the compensation of a key dead-lettered here ran, with its outcome. Called after the hook returned and the claim
     * store recorded the outcome, and, when that call threw, again for a copy that finds the key
     * dead: it must be idempotent and must write the key's record when {@link #deadLettered} could
     * not. A throw leaves the message unacknowledged (it is never run or compensated again; a copy
     * records it, for up to {@code maxDeferral}). Default: nothing.
     *
     * @throws Exception if the system of record cannot be written
     */
    default void compensated(DeadLetter deadLetter, CompensationOutcome outcome) throws Exception {
    }

    /**
     * How long the check remembers an effect, if it forgets them: the processor refuses a claim
     * store whose done window outlives it. Default: for ever.
     */
    default Optional<Duration> retention() {
        return Optional.empty();
    }

    /**
     * {@code check} as a ledger: itself when it is one, else a ledger that answers with the check
     * and keeps nothing else.
     */
    @SuppressWarnings("unchecked")
    static <T> EffectLedger<T> of(DedupCheck<T> check) {
        if (check instanceof EffectLedger<?> ledger) {
            return (EffectLedger<T>) ledger;
        }
        return check::alreadyApplied;
    }
}
