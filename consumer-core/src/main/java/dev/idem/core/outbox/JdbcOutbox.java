package dev.idem.core.outbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.internal.CurrentRun;
import dev.idem.core.internal.SchemaScripts;
import dev.idem.core.internal.SqlErrors;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The outbox table: messages written on the sender's own transaction, so they commit with its effect
 * or not at all, then published by an {@link OutboxRelay}. {@link #send} from a handler gives each
 * message an id that is the same on every re-run; from any other transactional code (a REST
 * controller's) an id of its own. Thread-safe.
 *
 * <pre>{@code
 * JdbcOutbox outbox = JdbcOutbox.builder(dataSource).build();
 * ledger.processor((Delivery<Order> delivery, Connection tx) -> {
 *     reserveStock(tx, delivery.payload());
 *     outbox.send(tx, OutboxMessage.to("stock-reserved").key(sku).value(json));
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

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final String insert;
    // Rows written by this process: a relay here looks again soon after one, rather than at its next poll.
    private final AtomicLong written = new AtomicLong();

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
     * Writes {@code message} on {@code transaction}; it is published once that commits. In a handler
     * (on the thread the processor runs it on; a send from another thread is not part of the run), its
     * id is derived from the incoming message's key and the send's place in the run, unless one is
     * given, so a re-run after a rollback writes the same ids. Outside a handler (a REST controller's
     * transaction), the id is the one given, else a random one.
     *
     * @return the message's id ({@link OutboxHeaders#MESSAGE_ID})
     * @throws SQLException when the row cannot be written, also when the table has its id already: in
     *                      a handler, a run of the same message committed its sends before (possible
     *                      only without a ledger, or when sending on another transaction than the
     *                      effect's), or a given id was used twice
     */
    public String send(Connection transaction, OutboxMessage message) throws SQLException {
        Objects.requireNonNull(transaction, "transaction");
        Objects.requireNonNull(message, "message");
        CurrentRun run = CurrentRun.get();
        String given = message.id();
        String id;
        if (run != null) {
            int place = run.nextSend();
            id = given != null ? given : derivedId(run.key(), place);
        } else {
            id = given != null ? given : UUID.randomUUID().toString();
        }
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
            written.incrementAndGet();
        } catch (SQLException e) {
            if (!SqlErrors.isDuplicateKey(e)) {
                throw e;
            }
            throw new SQLException("outbox message id '" + id + "' is in " + table + " already: "
                    + (run == null || given != null ? "a message with this id was sent before"
                    : "a run of " + run.key() + " committed its sends before"), e.getSQLState(), e.getErrorCode(), e);
        }
        return id;
    }

    /**
     * This outbox on the transaction {@code current} finds: what a framework's {@link Outbox} bean
     * is, with {@code current} giving the connection of the caller's transaction (and throwing
     * {@link IllegalStateException} when there is none).
     */
    public Outbox on(CurrentTransaction current) {
        Objects.requireNonNull(current, "current");
        return message -> {
            try {
                return send(current.connection(), message);
            } catch (SQLException e) {
                throw new OutboxException(e);
            }
        };
    }

    /** The connection of the caller's transaction, as a framework keeps it. */
    @FunctionalInterface
    public interface CurrentTransaction {
        /**
         * @throws IllegalStateException when the caller is in no transaction on the outbox's data source
         * @throws SQLException          when the connection cannot be had
         */
        Connection connection() throws SQLException;
    }

    /** A name-based UUID of the incoming key and the send's place in the run. */
    static String derivedId(IdempotencyKey key, int place) {
        String name = "idem-outbox\n" + key.group() + "\n" + key.topic() + "\n" + key.value() + "\n" + place;
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
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
        return new OutboxRelay.Builder(dataSource, table, clock, publisher, written);
    }

    /** An operator's actions on the rows: list, retry dead rows, purge. */
    public OutboxOperations operations() {
        return new OutboxOperations(dataSource, table, clock);
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
