package dev.idem.core.jdbc;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.EffectLedger;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.spi.CompensationOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A table of applied effects: the business dedup check, and the way each effect is recorded in the
 * handler's own transaction, so the effect and its record commit or roll back together. A concurrent
 * duplicate waits on the row's primary key and then finds it: its outcome is a duplicate, not a
 * failure. Wire it once, with {@link #processor}: it sets both the transactional handler and the
 * check. Ledger errors (the table missing, the database unreachable) are infrastructure trouble,
 * never the message's fault. Thread-safe.
 *
 * <pre>{@code
 * JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();   // checks the table
 * IdempotentProcessor<Order> processor = ledger.processor((Delivery<Order> delivery, Connection tx) ->
 *         deductStock(tx, delivery.payload()))
 *     .group("inventory").codec(PayloadCodec.json(Order.class)) ... .build();
 * }</pre>
 */
public final class JdbcEffectLedger implements EffectLedger<Object> {

    private static final Logger LOG = LoggerFactory.getLogger(JdbcEffectLedger.class);
    // PostgreSQL's longest name (NAMEDATALEN - 1); MySQL allows 64.
    private static final int MAX_IDENTIFIER = 63;
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

    private final DataSource dataSource;
    private final String table;
    private final LedgerSchema schema;
    // Set by build(): the table's unique key refuses a copy's insert with an error LedgerInserts knows.
    private volatile boolean insertIsTheCheck;
    private final Duration retention;
    private final Clock clock;
    private final LedgerTransactions transactions;
    private final LedgerDeadRows deadRows;
    private final LedgerPurge purge;
    private final LedgerInserts inserts;

    private JdbcEffectLedger(Builder b) {
        this.dataSource = b.dataSource;
        this.transactions = b.transactions != null ? b.transactions : LedgerTransactions.of(b.dataSource);
        this.table = b.table;
        this.schema = new LedgerSchema(b.table);
        this.retention = b.retention;
        this.clock = b.clock;
        this.deadRows = new LedgerDeadRows(b.dataSource, b.table, b.clock);
        this.purge = new LedgerPurge(b.dataSource, b.table, b.retention, b.clock);
        this.inserts = new LedgerInserts(b.dataSource, b.table, b.clock);
    }

    /** A builder for a ledger in {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * A processor builder whose handler runs {@code handler} in the ledger's transaction and whose
     * business check is this ledger: the one way to wire it.
     */
    public <T> IdempotentProcessor.Builder<T> processor(TransactionalHandler<T> handler) {
        return IdempotentProcessor.builder(transactional(handler)).dedupCheck(this);
    }

    /**
     * The DDL that creates this ledger's table (with the builder's table name) for the database
     * behind the data source: PostgreSQL, MySQL, MariaDB or H2.
     *
     * @throws IllegalStateException for another database, or if it cannot be reached
     */
    public String ddl() {
        try (Connection connection = dataSource.getConnection()) {
            return schema.ddl(LedgerSchema.dialect(connection));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the database's product name: " + e.getMessage(), e);
        }
    }

    /**
     * Creates this ledger's table (and its index) unless it exists. Safe when several processes
     * run it at once: on PostgreSQL, MySQL and MariaDB it holds a lock named after the table.
     *
     * @throws SQLException naming the statement that failed
     */
    public void createTable() throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            schema.create(connection);
        }
    }

    /**
     * Whether the key has a row. A key the database cannot hold (a data exception, SQL state class
     * 22: a NUL character on PostgreSQL, a value longer than its column) has none, and never will.
     */
    @Override
    public boolean alreadyApplied(Delivery<?> delivery) throws SQLException {
        IdempotencyKey key = delivery.key();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement select = connection.prepareStatement("select 1 from " + table
                     + " where consumer_group = ? and topic = ? and idempotency_key = ?")) {
            LedgerInserts.bind(select, key);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next();
            }
        } catch (SQLException e) {
            if (LedgerInserts.isDataException(e)) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Records the key as dead-lettered (a row with outcome {@code dead}), so {@link #alreadyApplied}
     * finds it after Redis lost its record. A row already there (the key dead-lettered before, or
     * applied) is left as it is. A key the database cannot hold (SQL state class 22) gets no row:
     * it is logged, not thrown, since no retry can write it.
     */
    @Override
    public void deadLettered(DeadLetter deadLetter) throws SQLException {
        deadRows.deadLettered(deadLetter);
    }

    /**
     * The fence of the key's row when it says dead-lettered with no compensation outcome yet (outcome
     * {@code dead}; {@code dead-ok} once {@link #compensated} recorded one).
     */
    @Override
    public OptionalLong compensationPending(Delivery<?> delivery) throws SQLException {
        return deadRows.compensationPending(delivery);
    }

    /**
     * Records that the dead-lettered key's compensation ran (outcome {@code dead-ok}, whether the
     * hook succeeded or failed every time: it is not run again either way). A key whose
     * {@link #deadLettered} row could not be written (the database was unreachable then) gets its
     * row now, as {@code dead-ok}.
     */
    @Override
    public void compensated(DeadLetter deadLetter, CompensationOutcome outcome) throws SQLException {
        deadRows.compensated(deadLetter, outcome);
    }

    /**
     * A compensation that runs {@code hook} in the ledger's transaction together with the record that
     * the key's compensation ran (its row's {@code dead → dead-ok}): a database-side undo (a refund
     * row, a stock return) commits with that record, so it happens once even when the process dies
     * inside the hook or right after it; a delivery that finds the record does not run the hook.
     * Set it on the processor: {@code ledger.processor(handler).compensation(ledger.compensation(hook))}.
     * An undo outside this database (an email, a payment provider's refund) is a plain
     * {@link Compensation} that dedupes on {@link DeadLetter#compensationId()}.
     */
    public Compensation compensation(TransactionalCompensation hook) {
        return new LedgerCompensation(transactions, table, clock, Objects.requireNonNull(hook, "hook"));
    }

    /**
     * Forgets a dead-lettered key, so that a deliberate replay of its dead letter runs once (the
     * claim store's record must be reset too). Applied effects are never forgotten this way.
     *
     * @return whether a dead row was removed
     */
    public boolean forgetDeadLetter(IdempotencyKey key) throws SQLException {
        return deadRows.forgetDeadLetter(key);
    }

    @Override
    public boolean recordedBy(DeliveryHandler<?> handler) {
        return handler instanceof Recording<?> recording && recording.ledger == this;
    }

    /**
     * Its own transactional handler inserts the ledger row before the effect, so a copy fails there:
     * true for that handler when the table has its unique key on the three key columns and the
     * database is one whose duplicate-key error this ledger recognises (checked at build; otherwise
     * the processor keeps asking {@link #alreadyApplied} first).
     */
    @Override
    public boolean refusesDuplicates(DeliveryHandler<?> handler) {
        return insertIsTheCheck && recordedBy(handler);
    }

    @Override
    public Optional<Duration> retention() {
        return Optional.of(retention);
    }

    /**
     * Wraps {@code handler} so it runs in one JDBC transaction that first inserts the ledger row,
     * then applies the effect, then commits. If the row already exists (now or once a concurrent
     * duplicate commits) nothing is applied and the delivery is reported as a duplicate. Prefer
     * {@link #processor}, which also sets the check.
     */
    public <T> DeliveryHandler<T> transactional(TransactionalHandler<T> handler) {
        return new Recording<>(this, Objects.requireNonNull(handler, "handler"));
    }

    /** A handler whose effect commits with its ledger row; the check knows it by this class. */
    private static final class Recording<T> implements DeliveryHandler<T> {
        private final JdbcEffectLedger ledger;
        private final TransactionalHandler<T> handler;

        Recording(JdbcEffectLedger ledger, TransactionalHandler<T> handler) {
            this.ledger = ledger;
            this.handler = handler;
        }

        @Override
        public void handle(Delivery<T> delivery) throws Exception {
            ledger.transactions.inTransaction(connection -> {
                ledger.inserts.record(connection, delivery);
                handler.handle(delivery, connection);
            });
        }
    }

    /**
     * Deletes rows older than the retention, {@code batchSize} rows per statement, so a large purge
     * never holds long locks. Deleted keys are no longer recognised as duplicates.
     *
     * @return rows deleted
     */
    public long purgeExpired(int batchSize) throws SQLException {
        return purge.purgeOlderThan(retention, batchSize);
    }

    /**
     * Deletes rows applied before {@code age} ago, {@code batchSize} rows per transaction, so a
     * large purge never holds long locks. Deleted keys are no longer recognised as duplicates.
     *
     * @return rows deleted
     * @throws IllegalArgumentException if age is shorter than the retention or batchSize below 1
     */
    public long purgeOlderThan(Duration age, int batchSize) throws SQLException {
        return purge.purgeOlderThan(age, batchSize);
    }

    /** Builds a {@link JdbcEffectLedger}. Not thread-safe. */
    public static final class Builder {

        private final DataSource dataSource;
        private String table = "idem_effect";
        // Longer than the claim store's default done window (7 days): the guarantee outlives the
        // fast path.
        private Duration retention = Duration.ofDays(30);
        private boolean createTable;
        private Clock clock = Clock.systemUTC();
        private @Nullable LedgerTransactions transactions;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** The ledger table, optionally schema-qualified. Default {@code idem_effect}. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** How long rows are kept ({@link #purgeExpired}); at least the claim store's done window. Default 30 days. */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /** Creates the table at build when it is missing (development, tests). Default false. */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * How an effect and its ledger row share a transaction: e.g. the application framework's
         * transaction manager, so the handler's own transactional code joins it. Its connections
         * must reach the same database as the data source. Default
         * {@link LedgerTransactions#of(DataSource)}: a connection of the data source, committed here.
         */
        public Builder transactions(LedgerTransactions transactions) {
            this.transactions = Objects.requireNonNull(transactions, "transactions");
            return this;
        }

        /** Clock for {@code applied_at} and purges. Default UTC system clock. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Builds the ledger and checks that its table can be read, so a missing, misplaced or
         * ungranted table fails at start-up rather than deferring every message.
         *
         * @throws IllegalArgumentException if the table name is not a plain SQL identifier, the
         *                                  retention is not positive, or the table cannot be read
         * @throws IllegalStateException    if {@link #createTable(boolean)} is on and a DDL statement
         *                                  fails (its message names the statement and the database's error)
         */
        public JdbcEffectLedger build() {
            if (table == null || !IDENTIFIER.matcher(table).matches()) {
                throw new IllegalArgumentException("table must be a SQL identifier like idem_effect but was '"
                        + table + "'");
            }
            if (table.replace('.', '_').length() + "_applied_at".length() > MAX_IDENTIFIER) {
                // PostgreSQL cuts longer names to 63 characters without a word: two tables (or a table
                // and its index) could become one, and the ledger would read another table's rows.
                throw new IllegalArgumentException("table must be at most " + (MAX_IDENTIFIER - "_applied_at".length())
                        + " characters (its index is named <table>_applied_at, and PostgreSQL cuts names at "
                        + MAX_IDENTIFIER + ") but was '" + table + "' (" + table.length() + ")");
            }
            if (retention == null || retention.isNegative() || retention.isZero()) {
                throw new IllegalArgumentException("retention must be > 0 but was " + retention);
            }
            Objects.requireNonNull(clock, "clock");
            JdbcEffectLedger ledger = new JdbcEffectLedger(this);
            if (createTable) {
                try {
                    ledger.createTable();
                } catch (SQLException e) {
                    throw new IllegalStateException("ledger table '" + table + "' could not be created (createTable "
                            + "is on): " + e.getMessage(), e);
                }
            }
            try (Connection connection = dataSource.getConnection();
                 Statement statement = connection.createStatement()) {
                statement.executeQuery("select consumer_group, topic, idempotency_key, fence, applied_at, outcome from "
                        + table + " where 1 = 0").close();
                ledger.insertIsTheCheck = LedgerInserts.insertIsTheCheck(connection, table);
            } catch (SQLException e) {
                throw new IllegalArgumentException("ledger table '" + table + "' cannot be read (missing, in another "
                        + "schema, or not granted; create it with ledger.ddl()): " + e.getMessage(), e);
            }
            if (!ledger.insertIsTheCheck) {
                LOG.warn("ledger table '{}': no unique key on (consumer_group, topic, idempotency_key) found, or "
                        + "a database whose duplicate-key error Idem does not know; the ledger is asked before "
                        + "each handler, and concurrent copies are refused only by such a key (create the "
                        + "table with ledger.ddl())", table);
            }
            return ledger;
        }
    }
}
