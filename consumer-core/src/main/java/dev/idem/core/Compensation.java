package dev.idem.core;


/**
 * Called for a dead-lettered key, after the dead letter is safely published: undo or report what the
 * failed message leaves behind (release reserved stock, notify a person). A throwing hook is retried
 * a bounded number of times, then reported; once its outcome is recorded it never runs again. A
 * process that dies while the hook runs, or after it returned and before the record, leaves it to the
 * next delivery, which runs it again with the same {@link DeadLetter#compensationId()}: dedupe an
 * external undo on it, or write the undo in the ledger's transaction
 * ({@code JdbcEffectLedger.compensation}), which runs once whatever dies.
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
