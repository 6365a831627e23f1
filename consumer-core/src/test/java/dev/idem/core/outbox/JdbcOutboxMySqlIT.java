package dev.idem.core.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.jdbc.LedgerFixture;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * The outbox's contract on MySQL's rules (MariaDB 10.6+: {@code SKIP LOCKED}). Uses
 * {@code IDEM_TEST_MYSQL_URL} (default {@code jdbc:mariadb://127.0.0.1:3306/test} as root); skipped
 * when no server answers unless {@code IDEM_TESTKIT_REQUIRE} contains {@code mysql}.
 */
class JdbcOutboxMySqlIT extends OutboxContract {

    private static final String URL = System.getenv().getOrDefault("IDEM_TEST_MYSQL_URL",
            "jdbc:mariadb://127.0.0.1:3306/test");
    private static final String USER = System.getenv().getOrDefault("IDEM_TEST_MYSQL_USER", "root");
    private static final String PASSWORD = System.getenv().getOrDefault("IDEM_TEST_MYSQL_PASSWORD", "");

    private final String table = "idem_outbox_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    @BeforeEach
    void outboxOnMySqlRules() {
        try (Connection probe = DriverManager.getConnection(URL, USER, PASSWORD)) {
            assertThat(probe.isValid(2)).isTrue();
        } catch (SQLException e) {
            if (System.getenv().getOrDefault("IDEM_TESTKIT_REQUIRE", "").contains("mysql")) {
                throw new IllegalStateException("MySQL/MariaDB required but not reachable at " + URL, e);
            }
            Assumptions.abort("no MySQL/MariaDB at " + URL + ": " + e.getMessage());
        }
        dataSource = LedgerFixture.dataSource(URL, USER, PASSWORD);
        outbox = JdbcOutbox.builder(dataSource).table(table).createTable(true).build();
    }

    @AfterEach
    void dropTables() throws SQLException {
        if (dataSource != null) {
            try (Connection connection = dataSource.getConnection()) {
                connection.createStatement().execute("drop table if exists " + table + ", " + table + "_relay");
            }
        }
    }
}
