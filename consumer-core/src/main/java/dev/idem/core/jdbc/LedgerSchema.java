package dev.idem.core.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.zip.CRC32;

/**
 * The ledger table's DDL per database, and its creation made safe when several processes create it
 * at once: the statements run under a database lock named after the table (PostgreSQL's advisory
 * transaction lock, MySQL's and MariaDB's {@code GET_LOCK}; on H2 one creator at a time per JVM),
 * since {@code CREATE ... IF NOT EXISTS} alone is not safe against a concurrent create on PostgreSQL
 * or H2. Stateless; thread-safe.
 */
final class LedgerSchema {

    // PostgreSQL advisory locks take two ints: this one says "Idem's ledger DDL" (any constant that
    // other applications are unlikely to pick), the other is the table's name hashed.
    private static final int PG_LOCK_CLASS = 0x1DE3_0001;
    // Long enough for every other creator's DDL on an empty table (milliseconds), short enough that
    // a stuck holder fails this start-up with a clear message instead of hanging it.
    private static final int LOCK_SECONDS = 60;

    private final String table;

    LedgerSchema(String table) {
        this.table = table;
    }

    /** The database behind {@code connection} as the DDL resources name it. */
    static String dialect(Connection connection) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        if (product.contains("postgres")) {
            return "postgresql";
        }
        if (product.contains("mysql") || product.contains("mariadb")) {
            return "mysql";
        }
        if (product.contains("h2")) {
            return "h2";
        }
        throw new IllegalStateException("no ledger DDL for " + product + " (PostgreSQL, MySQL, MariaDB and H2 "
                + "are supported); create the table from the PostgreSQL DDL in docs/guide/operating.md");
    }

    /** The DDL script for {@code dialect}, with this table's name. */
    String ddl(String dialect) {
        String resource = "idem_effect-" + dialect + ".sql";
        try (InputStream in = LedgerSchema.class.getResourceAsStream(resource)) {
            String sql = new String(Objects.requireNonNull(in, resource).readAllBytes(), StandardCharsets.UTF_8);
            // The index is named after the table, so two ledgers in one schema do not clash.
            return sql.replace("{index}", table.replace('.', '_') + "_applied_at").replace("{table}", table);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /**
     * Creates the table and its index unless they exist, holding the table's DDL lock where the
     * database has one, so N processes doing this at once all succeed.
     *
     * @throws SQLException naming the statement that failed, with the database's own error as cause
     */
    void create(Connection connection) throws SQLException {
        String dialect = dialect(connection);
        List<String> statements = statements(ddl(dialect));
        switch (dialect) {
            case "postgresql" -> createInTransaction(connection, statements);
            case "mysql" -> createUnderNamedLock(connection, statements);
            default -> createWithoutLock(connection, statements);
        }
    }

    /**
     * H2 has no named lock, and two of its sessions creating one index at once fail ("object already
     * exists"): one creator at a time in this JVM (an in-memory H2 lives in one JVM), and a second
     * pass when another process's create raced this one (the statements are idempotent).
     */
    private static void createWithoutLock(Connection connection, List<String> statements) throws SQLException {
        synchronized (LedgerSchema.class) {
            try {
                run(connection, statements);
            } catch (SQLException raced) {
                run(connection, statements);
            }
        }
    }

    /** PostgreSQL's DDL is transactional: the lock and the statements commit (or roll back) together. */
    private void createInTransaction(Connection connection, List<String> statements) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            try (Statement timeout = connection.createStatement()) {
                timeout.execute("set local lock_timeout = '" + LOCK_SECONDS + "s'");
            }
            try (PreparedStatement lock = connection.prepareStatement("select pg_advisory_xact_lock(?, ?)")) {
                lock.setInt(1, PG_LOCK_CLASS);
                lock.setInt(2, lockId());
                lock.execute();
            }
            run(connection, statements);
            connection.commit();
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(autoCommit);
        }
    }

    /** MySQL and MariaDB commit each DDL statement on its own: a session lock spans them. */
    private void createUnderNamedLock(Connection connection, List<String> statements) throws SQLException {
        // Lock names are at most 64 characters: the table's name may be longer, its hash is not.
        String name = "idem_ledger_ddl_" + Integer.toHexString(lockId());
        try (PreparedStatement lock = connection.prepareStatement("select get_lock(?, ?)")) {
            lock.setString(1, name);
            lock.setInt(2, LOCK_SECONDS);
            try (var granted = lock.executeQuery()) {
                if (!granted.next() || granted.getInt(1) != 1) {
                    throw new SQLException("the ledger's DDL lock '" + name + "' was not granted within "
                            + LOCK_SECONDS + " s: another process holds it");
                }
            }
        }
        try {
            run(connection, statements);
        } finally {
            try (PreparedStatement release = connection.prepareStatement("select release_lock(?)")) {
                release.setString(1, name);
                release.execute();
            }
        }
    }

    private static void run(Connection connection, List<String> statements) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                try {
                    statement.execute(sql);
                } catch (SQLException e) {
                    throw new SQLException("'" + sql.strip().replaceAll("\\s+", " ") + "' failed: " + e.getMessage(),
                            e.getSQLState(), e.getErrorCode(), e);
                }
            }
        }
    }

    private static List<String> statements(String ddl) {
        List<String> statements = new ArrayList<>();
        for (String sql : ddl.replaceAll("(?m)^--.*$", "").split(";")) {
            if (!sql.isBlank()) {
                statements.add(sql);
            }
        }
        return statements;
    }

    private int lockId() {
        // Unquoted names are case-insensitive on every supported database: one lock for both spellings.
        CRC32 crc = new CRC32();
        crc.update(table.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }
}
