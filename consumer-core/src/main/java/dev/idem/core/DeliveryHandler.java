package dev.idem.core;

/**
 * The user's business code for one delivery. Throwing counts as a failure: the claim is released
 * and the broker redelivers, until the attempts run out. Throw {@link NonRetryableException} to
 * dead-letter at once. Implementations may be called from several threads at once.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface DeliveryHandler<T> {

    /**
     * Applies the delivery's effect.
     *
     * @throws Exception when the effect could not be applied
     */
    void handle(Delivery<T> delivery) throws Exception;
}
