package dev.idem.core.jdbc;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Timestamp;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a compensation hook in the ledger's transaction together with the key's {@code dead → dead-ok}
 * update, so the hook's database-side undo commits with the record that it ran: once, even when its
 * process dies inside the hook or right after it. Thread-safe.
 */
final class LedgerCompensation implements Compensation {

    private static final Logger LOG = LoggerFactory.getLogger(LedgerCompensation.class);

    private final LedgerTransactions transactions;
    private final String table;
    private final Clock clock;
    private final TransactionalCompensation hook;

    LedgerCompensation(LedgerTransactions transactions, String table, Clock clock, TransactionalCompensation hook) {
        this.transactions = transactions;
        this.table = table;
        this.clock = clock;
        this.hook = hook;
    }

    @Override
    public void compensate(DeadLetter deadLetter) throws Exception {
        transactions.inTransaction(transaction -> {
            if (take(transaction, deadLetter)) {
                hook.compensate(deadLetter, transaction);
            }
        });
    }

    /**
     * Turns the key's row to {@code dead-ok} in the transaction (its row lock holds a copy off until
     * it ends), or writes it so when it is missing.
     *
     * @return false when the row says the compensation ran already (or the key was applied)
     */
    private boolean take(Connection transaction, DeadLetter letter) throws SQLException {
        // A refused statement aborts a PostgreSQL transaction: each is undone alone.
        Savepoint before = transaction.setSavepoint();
        try (PreparedStatement select = transaction.prepareStatement("select outcome from " + table
                + " where consumer_group = ? and topic = ? and idempotency_key = ? for update")) {
            JdbcEffectLedger.bind(select, letter.key());
            try (ResultSet rows = select.executeQuery()) {
                if (rows.next()) {
                    String outcome = rows.getString(1);
                    if (!"dead".equals(outcome)) {
                        LOG.info("compensation of {} ran and committed earlier (ledger outcome '{}'); not again",
                                letter.key(), outcome == null ? "applied" : outcome);
                        return false;
                    }
                    return update(transaction, letter);
                }
            }
            return insert(transaction, letter);
        } catch (SQLException e) {
            transaction.rollback(before);
            if (JdbcEffectLedger.isDuplicateKey(e)) {
                // A copy wrote the row and committed first: its compensation ran.
                LOG.info("compensation of {} committed by another delivery; not again", letter.key());
                return false;
            }
            if (JdbcEffectLedger.isDataException(e)) {
                LOG.warn("ledger table '{}' cannot hold the key of the dead-lettered {}; compensating without its "
                        + "record (the claim store alone remembers it): {}", table, letter.key(), e.getMessage());
                return true;
            }
            throw e;
        }
    }

    private boolean update(Connection transaction, DeadLetter letter) throws SQLException {
        try (PreparedStatement update = transaction.prepareStatement("update " + table + " set outcome = 'dead-ok'"
                + " where consumer_group = ? and topic = ? and idempotency_key = ? and outcome = 'dead'")) {
            JdbcEffectLedger.bind(update, letter.key());
            return update.executeUpdate() == 1;
        }
    }

    private boolean insert(Connection transaction, DeadLetter letter) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement("insert into " + table + " (consumer_group, "
                + "topic, idempotency_key, fence, applied_at, outcome) values (?, ?, ?, ?, ?, 'dead-ok')")) {
            JdbcEffectLedger.bind(insert, letter.key());
            insert.setLong(4, letter.fence());
            insert.setTimestamp(5, Timestamp.from(clock.instant()));
            return insert.executeUpdate() == 1;
        }
    }
}
