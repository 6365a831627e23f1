package dev.idem.spring.internal;

import dev.idem.core.jdbc.LedgerTransactions;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs the ledger row and the listener method in one transaction of Spring's transaction manager,
 * on the connection Spring binds to it: a {@code @Transactional} listener and its
 * {@code JdbcTemplate} (or JPA on the same {@code DataSource}) join the transaction that writes the
 * row, so both commit or both roll back.
 */
public final class SpringTransactions implements LedgerTransactions {

    private final DataSource dataSource;
    private final TransactionTemplate template;
    private final BoundConnections connections;

    public SpringTransactions(DataSource dataSource, PlatformTransactionManager transactions) {
        this.dataSource = dataSource;
        this.template = new TransactionTemplate(transactions);
        this.connections = BoundConnections.of(dataSource, transactions);
    }

    /**
     * Checks, with an empty transaction, that the transaction manager binds its connection to the
     * ledger's {@code DataSource}: one of another {@code DataSource} would leave the ledger row to
     * commit on its own, apart from the effect.
     *
     * @throws IllegalStateException naming {@code idem.ledger.transaction-manager} when it does not
     */
    public void verify() {
        try {
            template.executeWithoutResult(status -> {
                try {
                    connections.current("the ledger");
                } catch (java.sql.SQLException e) {
                    throw new IllegalStateException("the ledger's DataSource gives no connection: " + e.getMessage(), e);
                }
            });
        } catch (IllegalStateException e) {
            throw new IllegalStateException("idem.ledger.transaction-manager: " + e.getMessage(), e);
        }
    }

    @Override
    public void inTransaction(Work work) throws Exception {
        try {
            template.executeWithoutResult(status -> {
                Connection connection = DataSourceUtils.getConnection(dataSource);
                try {
                    work.run(connection);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Exception e) {
                    // A checked failure must roll back too: carried out as unchecked, unwrapped below.
                    throw new Carrier(e);
                } finally {
                    DataSourceUtils.releaseConnection(connection, dataSource);
                }
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
