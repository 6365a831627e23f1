package dev.idem.sample.inventory;

import io.micronaut.context.annotation.Value;
import jakarta.inject.Singleton;

/**
 * Transient handler failures for the demo: {@code inventory.faults.transient-percent} percent of the
 * orders (chosen by their id, so the demo knows which) fail on their first attempt, after the
 * deduction, so the transaction rolls the deduction and the ledger row back and the retry applies
 * it. Default 0: none. Thread-safe.
 */
@Singleton
public final class Faults {

    private final int percent;

    Faults(@Value("${inventory.faults.transient-percent:0}") int percent) {
        if (percent < 0 || percent > 100) {
            throw new IllegalArgumentException("inventory.faults.transient-percent must be 0..100 but was " + percent);
        }
        this.percent = percent;
    }

    /** Whether the order is one whose first attempt fails, with {@code percent} percent of orders chosen. */
    public static boolean chosen(String orderId, int percent) {
        // A spread of the id's hash, so neighbouring ids are not all chosen together.
        return Math.floorMod(orderId.hashCode() * 0x9E3779B1, 100) < percent;
    }

    /**
     * Fails the first attempt of a chosen order.
     *
     * @throws IllegalStateException on the first attempt of a chosen order (retryable)
     */
    void afterDeduction(Order order, int attempt) {
        if (attempt == 1 && chosen(order.orderId(), percent)) {
            throw new IllegalStateException("simulated transient failure of order " + order.orderId()
                    + " (attempt 1, after its deduction: rolled back)");
        }
    }
}
