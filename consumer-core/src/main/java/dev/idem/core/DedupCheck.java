package dev.idem.core;

/**
 * The business dedup check: the system of record says whether a delivery's effect already exists.
 * This, not the Redis claim, is Idem's guarantee: a unique key, a state guard, or Idem's JDBC
 * ledger. A system of record that also remembers dead letters and compensations implements
 * {@link EffectLedger}. Implementations are thread-safe.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface DedupCheck<T> {

    /**
     * @return true if the effect of this delivery is already applied
     * @throws Exception if the system of record cannot answer: the delivery is deferred (not counted,
     *                   retried after the backoff), never counted as the message's failure
     */
    boolean alreadyApplied(Delivery<? extends T> delivery) throws Exception;

    /**
     * No business check ("Redis-only"): only the Redis claim protects the effect. No two handlers for
     * one key run at once and a finished key is not run again, as long as Redis keeps its data. For
     * effects that are idempotent by nature, and for tests that must show duplicates without a check.
     * Building a processor with it logs a warning saying so.
     */
    @SuppressWarnings("unchecked")
    static <T> DedupCheck<T> none() {
        return (DedupCheck<T>) None.NONE;
    }
}

/** The one instance of {@link DedupCheck#none()}, so the processor can tell it apart. */
final class None {
    static final DedupCheck<Object> NONE = delivery -> false;

    private None() {
    }
}
