package dev.idem.core.internal;

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
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32;

/**
 * Idem's tables' DDL scripts per database, and their creation made safe when several processes
 * create a table at once: the statements run under a database lock named after the table
 * (PostgreSQL's advisory transaction lock, MySQL's and MariaDB's {@code GET_LOCK}; on H2 one creator
 * at a time per JVM), since {@code CREATE ... IF NOT EXISTS} alone is not safe against a concurrent
 * create on PostgreSQL or H2. Stateless; thread-safe.
 */
public final class SchemaScripts {

    // PostgreSQL advisory locks take two ints: this one says "Idem's DDL" (any constant that other
    // applications are unlikely to pick), the other is the table's name hashed.
    private static final int PG_LOCK_CLASS = 0x1DE3_0001;
    // Long enough for every other creator's DDL on an empty table (milliseconds), short enough that
    // a stuck holder fails this start-up with a clear message instead of hanging it.
    private static final int LOCK_SECONDS = 60;

    private SchemaScripts() {
    }

    /**
     * The database behind {@code connection} as the DDL resources name it: {@code postgresql},
     * {@code mysql} (MySQL and MariaDB) or {@code h2}.
     *
     * @throws IllegalStateException for another database, naming {@code what} and the guide page to read
     */
    public static String dialect(Connection connection, String what) throws SQLException {
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
        throw new IllegalStateException("no " + what + " DDL for " + product + " (PostgreSQL, MySQL, MariaDB and H2 "
                + "are supported); create the table from the PostgreSQL DDL in docs/guide/operating.md");
    }

    /**
     * The script {@code <name>-<dialect>.sql} next to {@code anchor}, each {@code {placeholder}}
     * replaced by its value.
     */
    public static String script(Class<?> anchor, String name, String dialect, Map<String, String> values) {
        String resource = name + "-" + dialect + ".sql";
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            String sql = new String(Objects.requireNonNull(in, resource).readAllBytes(), StandardCharsets.UTF_8);
            for (Map.Entry<String, String> value : values.entrySet()) {
                sql = sql.replace("{" + value.getKey() + "}", value.getValue());
            }
            return sql;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /**
     * Runs {@code script} (statements separated by {@code ;}, {@code --} comments) unless what it
     * creates exists, holding the DDL lock of {@code table} where the database has one, so N processes
     * doing this at once all succeed.
     *
     * @throws SQLException naming the statement that failed, with the database's own error as cause
     */
    public static void create(Connection connection, String dialect, String script, String table) throws SQLException {
        List<String> statements = statements(script);
        switch (dialect) {
            case "postgresql" -> createInTransaction(connection, statements, table);
            case "mysql" -> createUnderNamedLock(connection, statements, table);
            default -> createWithoutLock(connection, statements);
        }
    }

    /**
     * H2 has no named lock, and two of its sessions creating one index at once fail ("object already
     * exists"): one creator at a time in this JVM (an in-memory H2 lives in one JVM), and a second
     * pass when another process's create raced this one (the statements are idempotent).
     */
    private static void createWithoutLock(Connection connection, List<String> statements) throws SQLException {
        synchronized (SchemaScripts.class) {
            try {
                run(connection, statements);
            } catch (SQLException raced) {
                run(connection, statements);
            }
        }
    }

    /** PostgreSQL's DDL is transactional: the lock and the statements commit (or roll back) together. */
    private static void createInTransaction(Connection connection, List<String> statements, String table)
            throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            try (Statement timeout = connection.createStatement()) {
                timeout.execute("set local lock_timeout = '" + LOCK_SECONDS + "s'");
            }
            try (PreparedStatement lock = connection.prepareStatement("select pg_advisory_xact_lock(?, ?)")) {
                lock.setInt(1, PG_LOCK_CLASS);
                lock.setInt(2, lockId(table));
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
    private static void createUnderNamedLock(Connection connection, List<String> statements, String table)
            throws SQLException {
        // Lock names are at most 64 characters: the table's name may be longer, its hash is not.
        String name = "idem_ledger_ddl_" + Integer.toHexString(lockId(table));
        try (PreparedStatement lock = connection.prepareStatement("select get_lock(?, ?)")) {
            lock.setString(1, name);
            lock.setInt(2, LOCK_SECONDS);
            try (var granted = lock.executeQuery()) {
                if (!granted.next() || granted.getInt(1) != 1) {
                    throw new SQLException("the DDL lock '" + name + "' was not granted within "
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

    private static int lockId(String table) {
        // Unquoted names are case-insensitive on every supported database: one lock for both spellings.
        CRC32 crc = new CRC32();
        crc.update(table.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }
}
