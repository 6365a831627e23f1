package dev.idem.benchmarks;

import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL table's schema, under names of its own: {@code stock(sku primary key, available)},
 * the seed approach's dedup table (one row per order id, its primary key the unique index), and an
 * Idem effect ledger. Made fresh before each variant, dropped at the end.
 */
final class Stock implements AutoCloseable {

    /** SKUs in stock; orders spread over them. */
    static final int SKUS = 1_000;
    // Never runs out, so every order deducts and the expected stock does not depend on the order of arrival.
    private static final long UNITS_PER_SKU = 1_000_000;
    // Longer than a Hikari pool takes to close its connections and the server to end their backends.
    private static final Duration BACKENDS_GONE = Duration.ofSeconds(30);

    private final PostgresDatabase postgres;
    private final String stock;
    private final String dedup;
    private final String ledger;

    Stock(PostgresDatabase postgres) throws SQLException {
        this.postgres = postgres;
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        this.stock = "bench_stock_" + suffix;
        this.dedup = "bench_dedup_" + suffix;
        this.ledger = "bench_effect_" + suffix;
        execute("create table " + stock + " (sku varchar(16) primary key, available bigint not null)",
                "create table " + dedup + " (order_id varchar(64) primary key)");
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(postgres.jdbcUrl());
        dataSource.setUser(postgres.user());
        dataSource.setPassword(postgres.password());
        JdbcEffectLedger.builder(dataSource).table(ledger).createTable(true).build();
    }

    /** An effect ledger over this schema's ledger table. */
    JdbcEffectLedger ledger(DataSource pool) {
        return JdbcEffectLedger.builder(pool).table(ledger).build();
    }

    /** Every SKU at full stock, no order recorded. */
    void reset() throws SQLException {
        try (Connection connection = postgres.connect()) {
            try (Statement statement = connection.createStatement()) {
                // A new, empty table each time: no dead rows of the variant before.
                statement.execute("truncate " + stock + ", " + dedup + ", " + ledger);
            }
            try (PreparedStatement insert = connection.prepareStatement("insert into " + stock + " values (?, ?)")) {
                for (int i = 0; i < SKUS; i++) {
                    insert.setString(1, sku(i));
                    insert.setLong(2, UNITS_PER_SKU);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
        }
    }

    static String sku(int i) {
        return String.format("SKU-%05d", i);
    }

    /** The handler's effect, in the caller's transaction. */
    void deduct(Connection transaction, Order order) throws SQLException {
        try (PreparedStatement update = transaction.prepareStatement(
                "update " + stock + " set available = available - ? where sku = ? and available >= ?")) {
            update.setInt(1, order.quantity());
            update.setString(2, order.sku());
            update.setInt(3, order.quantity());
            update.executeUpdate();
        }
    }

    /**
     * The seed approach in one transaction: record the order id, then deduct; a copy fails on the
     * dedup table's primary key and rolls back.
     *
     * @return whether the order was applied (false: a copy)
     */
    boolean deductOnce(DataSource pool, Order order) throws SQLException {
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            try (PreparedStatement insert = connection.prepareStatement("insert into " + dedup + " values (?)")) {
                insert.setString(1, order.orderId());
                insert.executeUpdate();
                deduct(connection, order);
                connection.commit();
                return true;
            } catch (SQLException e) {
                connection.rollback();
                if ("23505".equals(e.getSQLState())) {   // unique violation: a copy
                    return false;
                }
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }

    /** Transactions the server counted in this database so far (commits and rollbacks, everyone's). */
    long transactions() throws SQLException {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("select xact_commit + xact_rollback from pg_stat_database "
                     + "where datname = current_database()")) {
            row.next();
            return row.getLong(1);
        }
    }

    /**
     * Waits until no backend of {@code application} is left: a backend reports its transactions to
     * pg_stat_database when it exits, so only then does {@link #transactions()} count all of them.
     */
    void awaitBackendsGone(String application) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + BACKENDS_GONE.toNanos();
        try (Connection connection = postgres.connect(); PreparedStatement select = connection.prepareStatement(
                "select count(*) from pg_stat_activity where application_name = ?")) {
            select.setString(1, application);
            while (true) {
                try (ResultSet row = select.executeQuery()) {
                    row.next();
                    if (row.getLong(1) == 0) {
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("backends of " + application + " still open after "
                            + BACKENDS_GONE);
                }
                TimeUnit.MILLISECONDS.sleep(20);
            }
        }
    }

    /** The stock now against {@code deducted} (units per SKU index that every order applied once takes). */
    Result.Database check(double transactionsPerMessage, Map<Integer, Long> deducted) throws SQLException {
        long left = 0;
        long expected = 0;
        int wrong = 0;
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("select sku, available from " + stock)) {
            while (rows.next()) {
                int sku = Integer.parseInt(rows.getString(1).substring("SKU-".length()));
                long must = UNITS_PER_SKU - deducted.getOrDefault(sku, 0L);
                left += rows.getLong(2);
                expected += must;
                wrong += rows.getLong(2) == must ? 0 : 1;
            }
        }
        return new Result.Database(transactionsPerMessage, left, expected, wrong);
    }

    /** Drops the tables. */
    @Override
    public void close() throws SQLException {
        execute("drop table if exists " + stock, "drop table if exists " + dedup, "drop table if exists " + ledger);
    }

    private void execute(String... sql) throws SQLException {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            for (String s : sql) {
                statement.execute(s);
            }
        }
    }

    /** One order: take {@code quantity} units of {@code sku}. */
    record Order(String orderId, String sku, int quantity) {
    }
}
