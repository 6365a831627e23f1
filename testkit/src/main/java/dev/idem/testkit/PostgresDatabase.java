package dev.idem.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * A reachable PostgreSQL database for tests.
 *
 * @param jdbcUrl  JDBC URL
 * @param user     user name
 * @param password password, may be empty
 */
public record PostgresDatabase(String jdbcUrl, String user, String password) {

    /**
     * Opens a new connection; the caller closes it.
     *
     * @throws SQLException if the database refuses the connection
     */
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, user, password);
    }

    @Override
    public String toString() {
        // Never print the password.
        return "PostgresDatabase[" + jdbcUrl + ", user=" + user + "]";
    }
}
