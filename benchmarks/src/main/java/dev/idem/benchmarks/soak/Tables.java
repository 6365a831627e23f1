package dev.idem.benchmarks.soak;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The soak's tables, named after its run so runs never share data. Effects and compensations have
 * no unique constraint on purpose: a second effect or compensation of one id is a row, and counted.
 *
 * @param prefix {@code soak_<run>}, a SQL identifier
 */
record Tables(String prefix) {

    /** Idem's JDBC ledger. */
    String ledger() {
        return prefix + "_ledger";
    }

    /** One row per applied effect, written in the ledger's transaction. */
    String effects() {
        return prefix + "_effect";
    }

    /** One row per compensation hook run. */
    String compensations() {
        return prefix + "_comp";
    }

    /** One row per handler call, committed whatever the handler does. */
    String calls() {
        return prefix + "_call";
    }

    void create(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            for (String table : new String[] {effects(), compensations(), calls()}) {
                statement.execute("create table " + table + " (id varchar(32) not null, slot int not null, "
                        + "pid bigint not null, attempt int not null, fence bigint not null, "
                        + "at timestamp with time zone not null default clock_timestamp(), note varchar(200))");
                statement.execute("create index " + table + "_id on " + table + " (id)");
            }
        }
    }

    void drop(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            for (String table : new String[] {effects(), compensations(), calls(), ledger()}) {
                statement.execute("drop table if exists " + table);
            }
        }
    }
}
