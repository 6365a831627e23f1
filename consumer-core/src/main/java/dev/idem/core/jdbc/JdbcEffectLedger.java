package dev.idem.core.jdbc;

import dev.idem.core.Delivery;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.DuplicateEffectException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.DedupCheck;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A table of applied effects (DESIGN §1): the business dedup check, and a way to record each
 * effect in the handler's own transaction, so the effect and its record commit or roll back
 * together. A concurrent duplicate waits on the row's primary key and then finds it: its outcome
 * is a duplicate, not a failure. Thread-safe.
 *
 * <pre>{@code
 * JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
 * IdempotentProcessor.builder(ledger.transactional((delivery, tx) -> deductStock(tx, delivery.payload())))
 *     .dedupCheck(ledger) ...
 * }</pre>
 */
public final class JdbcEffectLedger implements DedupCheck<Object> {

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
    // MySQL reports a duplicate primary key as SQL state 23000 with this vendor code.
    private static final int MYSQL_DUPLICATE_KEY = 1062;

    private final DataSource dataSource;
    private final String table;

    private JdbcEffectLedger(DataSource dataSource, String table) {
        this.dataSource = dataSource;
        this.table = table;
    }

    /** A builder for a ledger in {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * The DDL that creates the ledger table, for {@code postgresql}, {@code mysql} or {@code h2}.
     *
     * @throws IllegalArgumentException for another database
     */
    public static String ddl(String database) {
        String resource = "idem_effect-" + database + ".sql";
        try (InputStream in = JdbcEffectLedger.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("database must be postgresql, mysql or h2 but was '" + database + "'");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /** Runs {@link #ddl(String)} statements for {@code database} through {@code connection}. */
    public static void createTable(Connection connection, String database) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            for (String sql : ddl(database).replaceAll("(?m)^--.*$", "").split(";")) {
                if (!sql.isBlank()) {
                    statement.execute(sql);
                }
            }
        }
    }

    @Override
    public boolean alreadyApplied(Delivery<?> delivery) throws SQLException {
        IdempotencyKey key = delivery.key();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement select = connection.prepareStatement("select 1 from " + table
                     + " where consumer_group = ? and topic = ? and idempotency_key = ?")) {
            bind(select, key);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next();
            }
        }
    }

    /**
     * Wraps {@code handler} so it runs in one JDBC transaction that first inserts the ledger row,
     * then applies the effect, then commits. If the row already exists (now or once a concurrent
     * duplicate commits) nothing is applied and the delivery is reported as a duplicate.
     */
    public <T> DeliveryHandler<T> transactional(TransactionalHandler<T> handler) {
        Objects.requireNonNull(handler, "handler");
        return delivery -> {
            try (Connection connection = dataSource.getConnection()) {
                boolean autoCommit = connection.getAutoCommit();
                connection.setAutoCommit(false);
                try {
                    record(connection, delivery);
                    handler.handle(delivery, connection);
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

    private void record(Connection connection, Delivery<?> delivery) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement("insert into " + table
                + " (consumer_group, topic, idempotency_key, fence, applied_at) values (?, ?, ?, ?, ?)")) {
            bind(insert, delivery.key());
            insert.setLong(4, delivery.fence());
            insert.setTimestamp(5, Timestamp.from(Instant.now()));
            insert.executeUpdate();
        } catch (SQLException e) {
            if (isDuplicateKey(e)) {
                throw new DuplicateEffectException("effect of " + delivery.key() + " is already in " + table, e);
            }
            throw e;
        }
    }

    private static boolean isDuplicateKey(SQLException e) {
        String state = e.getSQLState();
        return "23505".equals(state) || e.getErrorCode() == MYSQL_DUPLICATE_KEY;
    }

    /**
     * Deletes rows applied before {@code age} ago, {@code batchSize} rows per transaction, so a
     * large purge never holds long locks. Deleted keys are no longer recognised as duplicates.
     *
     * @return rows deleted
     * @throws IllegalArgumentException if age is negative or batchSize below 1
     */
    public long purgeOlderThan(Duration age, int batchSize) throws SQLException {
        if (age == null || age.isNegative()) {
            throw new IllegalArgumentException("age must be >= 0 but was " + age);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1 but was " + batchSize);
        }
        Timestamp cutoff = Timestamp.from(Instant.now().minus(age));
        long deleted = 0;
        try (Connection connection = dataSource.getConnection()) {
            while (true) {
                List<String[]> keys = new ArrayList<>(batchSize);
                try (PreparedStatement select = connection.prepareStatement("select consumer_group, topic, "
                        + "idempotency_key from " + table + " where applied_at < ?")) {
                    select.setMaxRows(batchSize);
                    select.setTimestamp(1, cutoff);
                    try (ResultSet rows = select.executeQuery()) {
                        while (rows.next()) {
                            keys.add(new String[] {rows.getString(1), rows.getString(2), rows.getString(3)});
                        }
                    }
                }
                if (keys.isEmpty()) {
                    return deleted;
                }
                try (PreparedStatement delete = connection.prepareStatement("delete from " + table
                        + " where consumer_group = ? and topic = ? and idempotency_key = ?")) {
                    for (String[] key : keys) {
                        delete.setString(1, key[0]);
                        delete.setString(2, key[1]);
                        delete.setString(3, key[2]);
                        delete.addBatch();
                    }
                    for (int count : delete.executeBatch()) {
                        deleted += Math.max(count, 0);
                    }
                }
            }
        }
    }

    private static void bind(PreparedStatement statement, IdempotencyKey key) throws SQLException {
        statement.setString(1, key.group());
        statement.setString(2, key.topic());
        statement.setString(3, key.value());
    }

    /** Builds a {@link JdbcEffectLedger}. Not thread-safe. */
    public static final class Builder {

        private final DataSource dataSource;
        private String table = "idem_effect";

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** The ledger table, optionally schema-qualified. Default {@code idem_effect}. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** @throws IllegalArgumentException if the table name is not a plain SQL identifier */
        public JdbcEffectLedger build() {
            if (table == null || !IDENTIFIER.matcher(table).matches()) {
                throw new IllegalArgumentException("table must be a SQL identifier like idem_effect but was '"
                        + table + "'");
            }
            return new JdbcEffectLedger(dataSource, table);
        }
    }
}
