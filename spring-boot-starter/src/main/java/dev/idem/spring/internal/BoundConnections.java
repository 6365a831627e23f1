package dev.idem.spring.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The connection of the transaction Spring has open on a {@code DataSource} on this thread, and
 * nothing else: not a connection Spring would open on the side when the transaction is another
 * {@code DataSource}'s (it would commit on its own), nor the connection of a transaction that is
 * committing or rolling back (a write from an {@code afterCommit} callback commits apart from the
 * effect, or not at all). What the ledger and the outbox write on. Thread-safe.
 */
public final class BoundConnections implements TransactionExecutionListener {

    // Per thread, the connection holders of transactions between their commit (or rollback) and its end;
    // weak, so a holder whose end was never reported (a failed commit's odd path) is not kept.
    private static final ThreadLocal<Set<Object>> COMPLETING =
            ThreadLocal.withInitial(() -> Collections.newSetFromMap(new WeakHashMap<>()));

    private final DataSource dataSource;

    private BoundConnections(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * For {@code dataSource}, told by {@code transactions} (when it can tell: Spring's own managers
     * can) when its transactions commit or roll back.
     */
    public static BoundConnections of(DataSource dataSource, PlatformTransactionManager transactions) {
        BoundConnections connections = new BoundConnections(dataSource);
        if (transactions instanceof ConfigurableTransactionManager configurable
                && !configurable.getTransactionExecutionListeners().contains(connections)) {
            configurable.addListener(connections);
        }
        return connections;
    }

    /**
     * The current transaction's connection on the {@code DataSource}; not to be closed.
     *
     * @throws IllegalStateException naming {@code what} when there is no such transaction, or it is ending
     */
    public Connection current(String what) throws SQLException {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException(what + " needs a transaction: call it from an @IdempotentListener on the "
                    + "ledger or from a @Transactional method (the row must commit with the effect)");
        }
        Object holder = TransactionSynchronizationManager.getResource(dataSource);
        // Bound by the transaction manager when it began (DataSourceTransactionManager, JpaTransactionManager
        // with its DataSource), or by a statement on the side, whose connection the auto-commit check refuses.
        if (!(holder instanceof ConnectionHolder)) {
            throw new IllegalStateException(what + ": the transaction is not on the ledger's DataSource (it is another "
                    + "DataSource's, or its transaction manager is not that DataSource's: idem.ledger.data-source, "
                    + "idem.ledger.transaction-manager); the row would commit apart from the effect");
        }
        if (COMPLETING.get().contains(holder)) {
            throw new IllegalStateException(what + ": the transaction is committing or rolling back (an afterCommit "
                    + "callback?); the row would commit apart from the effect, or not at all");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        // A transactional connection stays open until its transaction ends: releasing only counts down.
        DataSourceUtils.releaseConnection(connection, dataSource);
        if (connection.getAutoCommit()) {
            throw new IllegalStateException(what + ": the connection of the transaction commits each statement on "
                    + "its own (auto-commit); the row would commit apart from the effect");
        }
        return connection;
    }

    @Override
    public void beforeCommit(TransactionExecution transaction) {
        completing(true);
    }

    @Override
    public void afterCommit(TransactionExecution transaction, @Nullable Throwable failure) {
        completing(false);
    }

    @Override
    public void beforeRollback(TransactionExecution transaction) {
        completing(true);
    }

    @Override
    public void afterRollback(TransactionExecution transaction, @Nullable Throwable failure) {
        completing(false);
    }

    private void completing(boolean begins) {
        Object holder = TransactionSynchronizationManager.getResource(dataSource);
        if (holder != null) {
            if (begins) {
                COMPLETING.get().add(holder);
            } else {
                COMPLETING.get().remove(holder);
            }
        }
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof BoundConnections that && that.dataSource == dataSource;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(dataSource);
    }
}
