package dev.idem.core.jdbc;

import dev.idem.core.internal.SchemaScripts;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;

/**
 * The ledger table's DDL per database, created under the table's DDL lock so several processes may
 * create it at once ({@link SchemaScripts}). Stateless; thread-safe.
 */
final class LedgerSchema {

    private final String table;

    LedgerSchema(String table) {
        this.table = table;
    }

    /** The database behind {@code connection} as the DDL resources name it. */
    static String dialect(Connection connection) throws SQLException {
        return SchemaScripts.dialect(connection, "ledger");
    }

    /** The DDL script for {@code dialect}, with this table's name. */
    String ddl(String dialect) {
        // The index is named after the table, so two ledgers in one schema do not clash.
        return SchemaScripts.script(LedgerSchema.class, "idem_effect", dialect,
                Map.of("index", table.replace('.', '_') + "_applied_at", "table", table));
    }

    /**
     * Creates the table and its index unless they exist, holding the table's DDL lock where the
     * database has one, so N processes doing this at once all succeed.
     *
     * @throws SQLException naming the statement that failed, with the database's own error as cause
     */
    void create(Connection connection) throws SQLException {
        String dialect = dialect(connection);
        SchemaScripts.create(connection, dialect, ddl(dialect), table);
    }
}
