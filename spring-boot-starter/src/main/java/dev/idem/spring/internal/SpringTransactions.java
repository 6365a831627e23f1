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

    public SpringTransactions(DataSource dataSource, PlatformTransactionManager transactions) {
        this.dataSource = dataSource;
        this.template = new TransactionTemplate(transactions);
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
