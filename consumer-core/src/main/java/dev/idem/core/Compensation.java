package dev.idem.core;


/**
 * Called once per dead-lettered key, after the dead letter is safely published: undo or report
 * what the failed message leaves behind (release reserved stock, notify a person). A throwing hook
 * is retried a bounded number of times, then reported; it never runs again on redelivery.
 */
@FunctionalInterface
public interface Compensation {

    /**
     * @throws Exception if compensation failed
     */
    void compensate(DeadLetter deadLetter) throws Exception;

    /** No compensation. */
    static Compensation none() {
        return deadLetter -> { };
    }
}
