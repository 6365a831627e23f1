package dev.idem.core.jdbc;

import dev.idem.core.DeadLetter;
import java.sql.Connection;

/**
 * A compensation whose undo is written through the given connection, inside the transaction that
 * also records, in the ledger, that the key's compensation ran
 * ({@link JdbcEffectLedger#compensation}). It must not commit, roll back or close the connection.
 */
@FunctionalInterface
public interface TransactionalCompensation {

    /**
     * @throws Exception when the undo could not be written; the transaction is rolled back and the
     *                   record of the compensation with it
     */
    void compensate(DeadLetter deadLetter, Connection transaction) throws Exception;
}
