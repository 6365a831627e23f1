package dev.idem.micronaut.internal;

import dev.idem.core.jdbc.LedgerTransactions;
import io.micronaut.transaction.TransactionOperations;
import java.sql.Connection;
import java.util.Objects;

/**
 * Runs the ledger row and the listener method in one transaction of Micronaut's transaction
 * manager, so a {@code @Transactional} listener (and the repositories or {@code DataSource}
 * connections it uses) joins the transaction that writes the row: both commit or both roll back.
 */
public final class MicronautTransactions implements LedgerTransactions {

    private final TransactionOperations<Connection> operations;

    public MicronautTransactions(TransactionOperations<Connection> operations) {
        this.operations = Objects.requireNonNull(operations, "operations");
    }

    @Override
    public void inTransaction(Work work) throws Exception {
        try {
            operations.executeWrite(status -> {
                try {
                    work.run(status.getConnection());
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Exception e) {
                    // A checked failure must roll back too: carried out as unchecked, unwrapped below.
                    throw new Carrier(e);
                }
                return null;
            });
        } catch (Carrier carrier) {
            throw (Exception) carrier.getCause();
        }
    }

    private static final class Carrier extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Carrier(Exception cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }
}
