package dev.idem.core.outbox;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * What an operator does with the outbox's rows ({@code idem outbox}): list them, send dead rows
 * back to the relay, and purge dead or sent rows. From {@link JdbcOutbox#operations()}. Thread-safe.
 */
public final class OutboxOperations {

    /** A row's state: not yet published, dead (never publishable as it is), or published and kept. */
    public enum State {
        NEW("new"), DEAD("dead"), SENT("sent");

        private final String column;

        State(String column) {
            this.column = column;
        }

        static State of(String column) {
            for (State state : values()) {
                if (state.column.equals(column)) {
                    return state;
                }
            }
            throw new IllegalStateException("unknown outbox state '" + column + "'");
        }
    }

    /**
     * One row, without its value.
     *
     * @param valueBytes the value's size, -1 when it has none
     */
    public record Row(long position, String id, String destination, @Nullable String key, State state, int attempts,
                      Instant createdAt, @Nullable Instant sentAt, @Nullable String lastError, long valueBytes) {
    }

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;

    OutboxOperations(DataSource dataSource, String table, Clock clock) {
        this.dataSource = dataSource;
        this.table = table;
        this.clock = clock;
    }

    /**
     * Rows in position order, of {@code state} and {@code destination} when given, at most {@code limit}.
     */
    public List<Row> rows(@Nullable State state, @Nullable String destination, int limit) throws SQLException {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1 but was " + limit);
        }
        String sql = "select position, id, destination, message_key, state, attempts, created_at, sent_at, last_error, "
                + "octet_length(payload) from " + table + where(state, destination) + " order by position";
        List<Row> rows = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement select = connection.prepareStatement(sql)) {
            select.setMaxRows(limit);
            bind(select, state, destination);
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    long bytes = result.getLong(10);
                    if (result.wasNull()) {
                        bytes = -1;
                    }
                    Timestamp sent = result.getTimestamp(8);
                    rows.add(new Row(result.getLong(1), result.getString(2), result.getString(3), result.getString(4),
                            State.of(result.getString(5)), result.getInt(6), result.getTimestamp(7).toInstant(),
                            sent == null ? null : sent.toInstant(), result.getString(9), bytes));
                }
            }
        }
        return rows;
    }

    /**
     * Sends dead rows (of {@code destination} when given) back to the relay: they are published on its
     * next pass, after the rows written since, so a key's order is not restored. Their last error
     * stays until they are published or fail again.
     *
     * @return rows sent back
     */
    public int retryDead(@Nullable String destination) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement update = connection.prepareStatement("update " + table + " set state = 'new'"
                     + where(State.DEAD, destination))) {
            connection.setAutoCommit(true);
            bind(update, State.DEAD, destination);
            return update.executeUpdate();
        }
    }

    /**
     * Deletes dead or sent rows older than {@code age} (dead ones by when they were written, sent ones by
     * when they were published), {@code batchSize} at a time.
     *
     * @return rows deleted
     * @throws IllegalArgumentException for {@link State#NEW} (rows not yet published are never purged)
     */
    public long purge(State state, Duration age, int batchSize) throws SQLException {
        Objects.requireNonNull(state, "state");
        if (state == State.NEW) {
            throw new IllegalArgumentException("rows not yet published are not purged: retry or wait for them");
        }
        if (age == null || age.isNegative() || batchSize < 1) {
            throw new IllegalArgumentException("age must be >= 0 and batchSize >= 1 but were " + age + ", " + batchSize);
        }
        Timestamp cutoff = Timestamp.from(clock.instant().minus(age));
        String column = state == State.SENT ? "sent_at" : "created_at";
        long deleted = 0;
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            List<Long> positions;
            do {
                positions = new ArrayList<>();
                try (PreparedStatement select = connection.prepareStatement("select position from " + table
                        + " where state = ? and " + column + " <= ?")) {
                    select.setMaxRows(batchSize);
                    select.setString(1, state.column);
                    select.setTimestamp(2, cutoff);
                    try (ResultSet result = select.executeQuery()) {
                        while (result.next()) {
                            positions.add(result.getLong(1));
                        }
                    }
                }
                if (!positions.isEmpty()) {
                    try (PreparedStatement delete = connection.prepareStatement("delete from " + table
                            + " where position = ? and state = ?")) {
                        for (long position : positions) {
                            delete.setLong(1, position);
                            delete.setString(2, state.column);
                            delete.addBatch();
                        }
                        for (int count : delete.executeBatch()) {
                            deleted += Math.max(count, 0);
                        }
                    }
                }
            } while (positions.size() == batchSize);
        }
        return deleted;
    }

    private static String where(@Nullable State state, @Nullable String destination) {
        List<String> conditions = new ArrayList<>();
        if (state != null) {
            conditions.add("state = ?");
        }
        if (destination != null) {
            conditions.add("destination = ?");
        }
        return conditions.isEmpty() ? "" : " where " + String.join(" and ", conditions);
    }

    private static void bind(PreparedStatement statement, @Nullable State state, @Nullable String destination)
            throws SQLException {
        int i = 1;
        if (state != null) {
            statement.setString(i++, state.column);
        }
        if (destination != null) {
            statement.setString(i, destination);
        }
    }
}
