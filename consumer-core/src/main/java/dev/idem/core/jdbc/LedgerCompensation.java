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
     * Turns the key's row from {@code dead} to {@code dead-ok} in the transaction (its row lock holds
     * a copy off until it ends), or writes it so when it is missing. Each statement is undone alone
     * on failure (a refused statement aborts a PostgreSQL transaction).
     *
     * @return false when the row says this dead-lettering's compensation ran already (or the key was
     *         applied): the hook must not run
     */
    private boolean take(Connection transaction, DeadLetter letter) throws SQLException {
        for (int tries = 1; ; tries++) {
            Savepoint before = transaction.setSavepoint();
            try {
                return takeOnce(transaction, letter);
            } catch (SQLException e) {
                undo(transaction, before, e);
                if (LedgerInserts.isDuplicateKey(e) && tries == 1) {
                    continue;   // a copy wrote the row meanwhile: read it
                }
                if (LedgerInserts.isDataException(e)) {
                    LOG.warn("ledger table '{}' cannot hold the key of the dead-lettered {}; compensating without "
                            + "its record (the claim store alone remembers it): {}", table, letter.key(), e.getMessage());
                    return true;
                }
                throw e;
            }
        }
    }

    private boolean takeOnce(Connection transaction, DeadLetter letter) throws SQLException {
        // The usual case first: the dead row written when the letter was published. An update on an
        // existing row locks that row only (a select for update of a missing one locks a gap on MySQL).
        if (update(transaction, letter, "dead") == 1) {
            return true;
        }
        try (PreparedStatement select = transaction.prepareStatement("select outcome, fence from " + table
                + " where consumer_group = ? and topic = ? and idempotency_key = ? for update")) {
            LedgerInserts.bind(select, letter.key());
            try (ResultSet rows = select.executeQuery()) {
                if (!rows.next()) {
                    insert(transaction, letter);
                    return true;
                }
                String outcome = rows.getString(1);
                long fence = rows.getLong(2);
                if ("dead-ok".equals(outcome) && fence != 0 && letter.fence() != 0 && fence != letter.fence()) {
                    // Another dead-lettering of the key (after a replay) whose row was never forgotten.
                    update(transaction, letter, "dead-ok");
                    return true;
                }
                LOG.info("compensation of {} ran and committed earlier (ledger outcome '{}'); not again",
                        letter.key(), outcome == null ? "applied" : outcome);
                return false;
            }
        }
    }

    private static void undo(Connection transaction, Savepoint before, SQLException cause) throws SQLException {
        try {
            transaction.rollback(before);
        } catch (SQLException gone) {
            // The database rolled the whole transaction back (a MySQL deadlock): the cause says why.
            cause.addSuppressed(gone);
            throw cause;
        }
    }

    /** Sets the row of the key whose outcome is {@code from} to {@code dead-ok} with this letter's fence. */
    private int update(Connection transaction, DeadLetter letter, String from) throws SQLException {
        try (PreparedStatement update = transaction.prepareStatement("update " + table + " set outcome = 'dead-ok', "
                + "fence = ? where consumer_group = ? and topic = ? and idempotency_key = ? and outcome = ?")) {
            update.setLong(1, letter.fence());
            update.setString(2, letter.key().group());
            update.setString(3, letter.key().topic());
            update.setString(4, letter.key().value());
            update.setString(5, from);
            return update.executeUpdate();
        }
    }

    private void insert(Connection transaction, DeadLetter letter) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement("insert into " + table + " (consumer_group, "
                + "topic, idempotency_key, fence, applied_at, outcome) values (?, ?, ?, ?, ?, 'dead-ok')")) {
            LedgerInserts.bind(insert, letter.key());
            insert.setLong(4, letter.fence());
            insert.setTimestamp(5, Timestamp.from(clock.instant()));
            insert.executeUpdate();
        }
    }
}
