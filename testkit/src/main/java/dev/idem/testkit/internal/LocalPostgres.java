package dev.idem.testkit.internal;

import dev.idem.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/** PostgreSQL from {@code IDEM_TEST_JDBC_URL}, else database {@code test} on 127.0.0.1:5432. */
final class LocalPostgres {

    private static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test?connectTimeout=2";

    private LocalPostgres() {
    }

    static PostgresProbe probe() {
        String url = System.getenv("IDEM_TEST_JDBC_URL");
        PostgresDatabase database = url == null || url.isBlank()
                ? new PostgresDatabase(DEFAULT_URL, env("IDEM_TEST_JDBC_USER", "postgres"),
                        env("IDEM_TEST_JDBC_PASSWORD", ""))
                : new PostgresDatabase(url.trim(), env("IDEM_TEST_JDBC_USER", ""), env("IDEM_TEST_JDBC_PASSWORD", ""));
        try (Connection connection = database.connect()) {
            if (!connection.isValid(2)) {
                return PostgresProbe.missing(database.jdbcUrl() + " accepted the connection but is not valid");
            }
            return PostgresProbe.found(database);
        } catch (SQLException e) {
            return PostgresProbe.missing("no database at " + database.jdbcUrl() + " (" + e.getMessage()
                    + "); set IDEM_TEST_JDBC_URL, IDEM_TEST_JDBC_USER and IDEM_TEST_JDBC_PASSWORD");
        }
    }

    private static String env(String name, String fallback) {
        return Objects.requireNonNullElse(System.getenv(name), fallback);
    }
}
