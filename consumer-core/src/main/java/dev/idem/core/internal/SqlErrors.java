package dev.idem.core.internal;

import java.sql.SQLException;

/** What a database's error means, read the same way by the ledger and the outbox. Stateless. */
public final class SqlErrors {

    // MySQL and MariaDB report a duplicate key as SQL state 23000 with this vendor code.
    private static final int MYSQL_DUPLICATE_KEY = 1062;

    private SqlErrors() {
    }

    /** A unique key refused the row: SQL state 23505 (PostgreSQL, H2), or MySQL's and MariaDB's 1062. */
    public static boolean isDuplicateKey(SQLException e) {
        return "23505".equals(e.getSQLState()) || e.getErrorCode() == MYSQL_DUPLICATE_KEY;
    }
}
