package dev.idem.core;


/**
 * The business dedup check: the system of record says whether a delivery's effect already exists.
 * This, not the Redis claim, is Idem's guarantee (DESIGN §1). Implementations are thread-safe.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface DedupCheck<T> {

    /**
     * @return true if the effect of this delivery is already applied
     * @throws Exception if the system of record cannot answer (counted as a failure)
     */
    boolean alreadyApplied(Delivery<? extends T> delivery) throws Exception;

    /**
     * No business check: only the Redis claim protects the effect. For tests that must show
     * duplicates without a check, and for effects that are idempotent by nature.
     */
    static <T> DedupCheck<T> none() {
        return delivery -> false;
    }
}
