package dev.idem.core.jdbc;

import dev.idem.core.CheckUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * How the ledger runs an effect and its ledger row in one transaction. The default takes a
 * connection from the ledger's {@code DataSource} and commits or rolls it back itself; a framework
 * integration (Idem's Micronaut module) runs the work in the framework's transaction instead, so
 * a handler's own {@code @Transactional} code joins the transaction that writes the row.
 * Implementations must commit when the work returns and roll back when it throws, rethrowing what
 * it threw. Thread-safe.
 */
@FunctionalInterface
public interface LedgerTransactions {

    /** Work done on the transaction's connection; it must not commit, roll back or close it. */
    @FunctionalInterface
    interface Work {
        void run(Connection transaction) throws Exception;
    }

    /**
     * Runs {@code work} in one transaction: commits when it returns, rolls back and rethrows when it
     * throws.
     *
     * @throws CheckUnavailableException when no connection can be had (never counted against the message)
     */
    void inTransaction(Work work) throws Exception;

    /** A connection of {@code dataSource} per transaction, committed or rolled back here (the default). */
    static LedgerTransactions of(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return work -> {
            Connection connection;
            try {
                connection = dataSource.getConnection();
            } catch (SQLException e) {
                throw new CheckUnavailableException("the ledger's database cannot be reached: " + e.getMessage(), e);
            }
            try (connection) {
                boolean autoCommit = connection.getAutoCommit();
                connection.setAutoCommit(false);
                try {
                    work.run(connection);
                    connection.commit();
                } catch (Exception | Error e) {
                    connection.rollback();
                    throw e;
                } finally {
                    connection.setAutoCommit(autoCommit);
                }
            }
        };
    }
}
