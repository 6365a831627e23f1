package dev.idem.core.jdbc;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.CompensationOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger's rows of dead-lettered keys: {@code dead} once the letter is published,
 * {@code dead-ok} once its compensation ran, forgotten for a deliberate replay. They keep a Redis
 * loss from repeating a dead letter or losing a compensation.
 */
final class LedgerDeadRows {

    private static final Logger LOG = LoggerFactory.getLogger(LedgerDeadRows.class);

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;

    LedgerDeadRows(DataSource dataSource, String table, Clock clock) {
        this.dataSource = dataSource;
        this.table = table;
        this.clock = clock;
    }

    /**
     * Records the key as dead-lettered (a row with outcome {@code dead}), so {@link JdbcEffectLedger#alreadyApplied}
     * finds it after Redis lost its record. A row already there (the key dead-lettered before, or
     * applied) is left as it is. A key the database cannot hold (SQL state class 22) gets no row:
     * it is logged, not thrown, since no retry can write it.
     */
    void deadLettered(DeadLetter deadLetter) throws SQLException {
        insertDead(deadLetter, "dead");
    }

    private void insertDead(DeadLetter deadLetter, String outcome) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement insert = connection.prepareStatement("insert into " + table + " (consumer_group, "
                     + "topic, idempotency_key, fence, applied_at, outcome) values (?, ?, ?, ?, ?, ?)")) {
            LedgerInserts.bind(insert, deadLetter.key());
            insert.setLong(4, deadLetter.fence());
            insert.setTimestamp(5, Timestamp.from(clock.instant()));
            insert.setString(6, outcome);
            insert.executeUpdate();
        } catch (SQLException e) {
            if (LedgerInserts.isDataException(e)) {
                LOG.warn("ledger table '{}' cannot hold the key of the dead-lettered {}; the claim store alone "
                        + "remembers it: {}", table, deadLetter.key(), e.getMessage());
            } else if (!LedgerInserts.isDuplicateKey(e)) {
                throw e;
            }
        }
    }

    /**
     * The fence of the key's row when it says dead-lettered with no compensation outcome yet (outcome
     * {@code dead}; {@code dead-ok} once {@link #compensated} recorded one).
     */
    OptionalLong compensationPending(Delivery<?> delivery) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement select = connection.prepareStatement("select fence from " + table
                     + " where consumer_group = ? and topic = ? and idempotency_key = ? and outcome = 'dead'")) {
            LedgerInserts.bind(select, delivery.key());
            try (ResultSet rows = select.executeQuery()) {
                return rows.next() ? OptionalLong.of(rows.getLong(1)) : OptionalLong.empty();
            }
        } catch (SQLException e) {
            if (LedgerInserts.isDataException(e)) {
                return OptionalLong.empty();
            }
            throw e;
        }
    }

    /**
     * Records that the dead-lettered key's compensation ran (outcome {@code dead-ok}, whether the
     * hook succeeded or failed every time: it is not run again either way). A key whose
     * {@link #deadLettered} row could not be written (the database was unreachable then) gets its
     * row now, as {@code dead-ok}.
     */
    void compensated(DeadLetter deadLetter, CompensationOutcome outcome) throws SQLException {
        int updated;
        try (Connection connection = dataSource.getConnection();
             PreparedStatement update = connection.prepareStatement("update " + table + " set outcome = 'dead-ok'"
                     + " where consumer_group = ? and topic = ? and idempotency_key = ? and outcome = 'dead'")) {
            LedgerInserts.bind(update, deadLetter.key());
            updated = update.executeUpdate();
        } catch (SQLException e) {
            if (LedgerInserts.isDataException(e)) {
                return;
            }
            throw e;
        }
        if (updated == 0) {
            // No dead row: written now, or left as it is when the key has a row already.
            insertDead(deadLetter, "dead-ok");
        }
    }

    /**
     * Forgets a dead-lettered key, so that a deliberate replay of its dead letter runs once (the
     * claim store's record must be reset too). Applied effects are never forgotten this way.
     *
     * @return whether a dead row was removed
     */
    boolean forgetDeadLetter(IdempotencyKey key) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement delete = connection.prepareStatement("delete from " + table
                     + " where consumer_group = ? and topic = ? and idempotency_key = ?"
                     + " and outcome in ('dead', 'dead-ok')")) {
            LedgerInserts.bind(delete, key);
            return delete.executeUpdate() > 0;
        }
    }
}
