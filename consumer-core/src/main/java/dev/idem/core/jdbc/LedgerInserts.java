package dev.idem.core.jdbc;

import dev.idem.core.internal.SqlErrors;
import dev.idem.core.CheckUnavailableException;
import dev.idem.core.Delivery;
import dev.idem.core.DuplicateEffectException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.NonRetryableException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;

/**
 * A key's ledger row, written in the handler's transaction, and what the database's refusals mean:
 * a duplicate key is a copy, a data exception about the key is the message's defect, anything else
 * the ledger's trouble. Also whether the table's unique key makes the insert the check. Thread-safe.
 */
final class LedgerInserts {

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;

    LedgerInserts(DataSource dataSource, String table, Clock clock) {
        this.dataSource = dataSource;
        this.table = table;
        this.clock = clock;
    }

    void record(Connection connection, Delivery<?> delivery) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement("insert into " + table
                + " (consumer_group, topic, idempotency_key, fence, applied_at) values (?, ?, ?, ?, ?)")) {
            bind(insert, delivery.key());
            insert.setLong(4, delivery.fence());
            insert.setTimestamp(5, Timestamp.from(clock.instant()));
            insert.executeUpdate();
        } catch (SQLException e) {
            if (isDuplicateKey(e)) {
                throw new DuplicateEffectException("effect of " + delivery.key() + " is already in " + table, e);
            }
            if (isDataException(e) && othersFit(delivery)) {
                // The message's defect: no retry can store this key (longer than the table's column,
                // characters the database's encoding lacks), so it goes to the dead letter with the reason.
                throw new NonRetryableException("ledger table " + table + " cannot hold the key of " + delivery.key()
                        + ": " + e.getMessage(), e);
            }
            // Not the message's fault: the table is missing, not granted, or the database is failing.
            throw new CheckUnavailableException("cannot write the ledger row to " + table + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether a row of this delivery's group and topic with a short ASCII key can be written (tried
     * in a transaction rolled back): then a data exception is about the key, and only the key.
     * Otherwise (a group longer than its column, a mistyped fence column) it is the table's, and no
     * message should be dead-lettered for it.
     */
    private boolean othersFit(Delivery<?> delivery) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try (PreparedStatement insert = connection.prepareStatement("insert into " + table
                    + " (consumer_group, topic, idempotency_key, fence, applied_at) values (?, ?, ?, ?, ?)")) {
                // A key no message can have: key text never holds '!' after "b64:".
                bind(insert, new IdempotencyKey(delivery.key().group(), delivery.key().topic(), "b64:!"));
                insert.setLong(4, delivery.fence());
                insert.setTimestamp(5, Timestamp.from(clock.instant()));
                insert.executeUpdate();
                return true;
            } catch (SQLException e) {
                return isDuplicateKey(e);
            } finally {
                connection.rollback();
                connection.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            return false;
        }
    }

    /** SQL state class 22: the data itself is refused (a NUL in text, a value too long, an invalid encoding). */
    static boolean isDataException(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.startsWith("22");
    }

    static boolean isDuplicateKey(SQLException e) {
        return SqlErrors.isDuplicateKey(e);
    }

    /** Whether the table's inserts refuse a copy in a way {@link #record} recognises. */
    static boolean insertIsTheCheck(Connection connection, String table) throws SQLException {
        try {
            LedgerSchema.dialect(connection);
        } catch (IllegalStateException e) {
            return false;
        }
        int dot = table.indexOf('.');
        String schema = dot < 0 ? null : table.substring(0, dot);
        String name = table.substring(dot + 1);
        Set<String> key = Set.of("consumer_group", "topic", "idempotency_key");
        DatabaseMetaData metadata = connection.getMetaData();
        // Databases store unquoted names as written, in lower or in upper case.
        for (UnaryOperator<String> spelling : List.<UnaryOperator<String>>of(n -> n, n -> n.toLowerCase(Locale.ROOT),
                n -> n.toUpperCase(Locale.ROOT))) {
            String inSchema = schema == null ? null : spelling.apply(schema);
            String candidate = spelling.apply(name);
            Map<String, Set<String>> unique = new HashMap<>();
            try (ResultSet rows = metadata.getIndexInfo(connection.getCatalog(), inSchema, candidate, true, false)) {
                while (rows.next()) {
                    String index = rows.getString("INDEX_NAME");
                    String column = rows.getString("COLUMN_NAME");
                    if (index != null && column != null) {
                        unique.computeIfAbsent(index, i -> new HashSet<>()).add(column.toLowerCase(Locale.ROOT));
                    }
                }
            }
            if (unique.containsValue(key)) {
                return true;
            }
        }
        return false;
    }

    static void bind(PreparedStatement statement, IdempotencyKey key) throws SQLException {
        statement.setString(1, key.group());
        statement.setString(2, key.topic());
        statement.setString(3, key.value());
    }
}
