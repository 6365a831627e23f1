package dev.idem.core.outbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.Delivery;
import dev.idem.core.internal.SchemaScripts;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The outbox table: messages written on the sender's own transaction, so they commit with its effect
 * or not at all, then published by an {@link OutboxRelay}. From a handler on the ledger's
 * transaction, {@link #sends} gives each message an id that is the same on every re-run; from any
 * other transactional code (a REST controller's), {@link #send} writes one with a random id or the
 * one given. Thread-safe.
 *
 * <pre>{@code
 * JdbcOutbox outbox = JdbcOutbox.builder(dataSource).build();
 * ledger.processor((Delivery<Order> delivery, Connection tx) -> {
 *     reserveStock(tx, delivery.payload());
 *     outbox.sends(delivery, tx).send(OutboxMessage.to("stock-reserved").key(sku).value(json));
 * })
 * }</pre>
 */
public final class JdbcOutbox {

    /** Rows are spread over this many partitions by destination and key; one relay works on a partition at a time. */
    public static final int PARTITIONS = 16;
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
    // PostgreSQL's longest name (NAMEDATALEN - 1), less the longest suffix (_unsent, _relay).
    private static final int MAX_TABLE = 63 - "_unsent".length();
    private static final ObjectMapper JSON = new ObjectMapper();
    // The last run's sends on this thread: a handler that asks twice gets the same numbering.
    private static final ThreadLocal<@Nullable OutboxSends> LAST = new ThreadLocal<>();

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final String insert;

    private JdbcOutbox(Builder b) {
        this.dataSource = b.dataSource;
        this.table = b.table;
        this.clock = b.clock;
        this.insert = "insert into " + table + " (id, destination, message_key, payload, headers, traceparent, "
                + "partition_no, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /** A builder for an outbox in {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * The sends of one handler run on its transaction (the ledger's {@code Connection}): the n-th
     * message's id is derived from the incoming message's key and n, the same on every re-run.
     * Asked twice in one run (same delivery and transaction, same thread), it is the same object.
     */
    public OutboxSends sends(Delivery<?> delivery, Connection transaction) {
        Objects.requireNonNull(delivery, "delivery");
        Objects.requireNonNull(transaction, "transaction");
        OutboxSends last = LAST.get();
        if (last != null && last.of(this, delivery, transaction)) {
            return last;
        }
        OutboxSends sends = new OutboxSends(this, delivery, transaction);
        LAST.set(sends);
        return sends;
    }

    /**
     * Writes {@code message} on {@code transaction}, outside any handler run (a transactional
     * session): its id is the one given, else a random one.
     *
     * @return the message's id
     */
    public String send(Connection transaction, OutboxMessage message) throws SQLException {
        String id = message.id() != null ? message.id() : UUID.randomUUID().toString();
        insert(transaction, message, id);
        return id;
    }

    void insert(Connection transaction, OutboxMessage message, String id) throws SQLException {
        try (PreparedStatement statement = transaction.prepareStatement(insert)) {
            statement.setString(1, id);
            statement.setString(2, message.destination());
            statement.setString(3, message.key());
            statement.setBytes(4, message.valueShared());
            statement.setString(5, message.headers().isEmpty() ? null : json(message.headers()));
            statement.setString(6, OutboxTrace.current());
            statement.setInt(7, partition(message.destination(), message.key()));
            statement.setTimestamp(8, Timestamp.from(clock.instant()));
            statement.executeUpdate();
        } catch (SQLException e) {
            if ("23505".equals(e.getSQLState()) || e.getErrorCode() == 1062) {
                throw new SQLException("outbox message id '" + id + "' is in " + table + " already: a message "
                        + "with this id was sent before (an id given twice, or two OutboxSends in one run)",
                        e.getSQLState(), e.getErrorCode(), e);
            }
            throw e;
        }
    }

    /** The partition of a message: messages of one destination and key share it, so they keep their order. */
    static int partition(String destination, @Nullable String key) {
        CRC32 crc = new CRC32();
        crc.update(destination.getBytes(StandardCharsets.UTF_8));
        crc.update(0);
        if (key != null) {
            crc.update(key.getBytes(StandardCharsets.UTF_8));
        }
        return (int) (crc.getValue() % PARTITIONS);
    }

    private static String json(Map<String, String> headers) {
        try {
            return JSON.writeValueAsString(headers);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("headers cannot be written as JSON: " + e.getMessage(), e);
        }
    }

    /** A relay that publishes this outbox's committed rows through {@code publisher}. */
    public OutboxRelay.Builder relay(OutboxPublisher publisher) {
        return new OutboxRelay.Builder(dataSource, table, clock, publisher);
    }

    /** What waits in the outbox: per destination, unsent and dead rows and the oldest unsent. */
    public OutboxStatus status() throws SQLException {
        return OutboxStatus.read(dataSource, table, clock);
    }

    /**
     * The DDL that creates this outbox's tables (the outbox and its relay partitions) for the
     * database behind the data source: PostgreSQL, MySQL, MariaDB or H2.
     */
    public String ddl() {
        try (Connection connection = dataSource.getConnection()) {
            return ddl(SchemaScripts.dialect(connection, "outbox"));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the database's product name: " + e.getMessage(), e);
        }
    }

    private String ddl(String dialect) {
        return SchemaScripts.script(JdbcOutbox.class, "idem_outbox", dialect,
                Map.of("table", table, "prefix", table.replace('.', '_')));
    }

    /** Creates the outbox's tables unless they exist; safe when several processes run it at once. */
    public void createTable() throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            String dialect = SchemaScripts.dialect(connection, "outbox");
            SchemaScripts.create(connection, dialect, ddl(dialect), table);
        }
    }

    /** The table's name. */
    public String table() {
        return table;
    }

    /** Builds a {@link JdbcOutbox}. Not thread-safe. */
    public static final class Builder {

        private final DataSource dataSource;
        private String table = "idem_outbox";
        private boolean createTable;
        private Clock clock = Clock.systemUTC();

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** The outbox table, optionally schema-qualified; its relay partitions are {@code <table>_relay}. Default {@code idem_outbox}. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** Creates the tables at build when missing (development, tests). Default false. */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /** Clock for {@code created_at}. Default UTC system clock. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Builds the outbox and checks that its tables can be read, so a missing or ungranted table
         * fails at start-up rather than failing every handler.
         *
         * @throws IllegalArgumentException if the table name is not a plain SQL identifier or the
         *                                  tables cannot be read
         * @throws IllegalStateException    if {@link #createTable(boolean)} is on and a DDL statement fails
         */
        public JdbcOutbox build() {
            if (table == null || !IDENTIFIER.matcher(table).matches() || table.length() > MAX_TABLE) {
                throw new IllegalArgumentException("table must be a SQL identifier like idem_outbox of at most "
                        + MAX_TABLE + " characters but was '" + table + "'");
            }
            JdbcOutbox outbox = new JdbcOutbox(this);
            if (createTable) {
                try {
                    outbox.createTable();
                } catch (SQLException e) {
                    throw new IllegalStateException("outbox table '" + table + "' could not be created (createTable "
                            + "is on): " + e.getMessage(), e);
                }
            }
            try (Connection connection = dataSource.getConnection();
                 Statement statement = connection.createStatement()) {
                statement.executeQuery("select position, id, destination, message_key, payload, headers, traceparent, "
                        + "partition_no, created_at, state, attempts, last_error, sent_at from " + table
                        + " where 1 = 0").close();
                statement.executeQuery("select partition_no, served_at from " + table + "_relay where 1 = 0").close();
            } catch (SQLException e) {
                throw new IllegalArgumentException("outbox table '" + table + "' cannot be read (missing, in another "
                        + "schema, or not granted; create it with outbox.ddl()): " + e.getMessage(), e);
            }
            return outbox;
        }
    }
}
