package dev.idem.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

@IdemTestKit
class PostgresSmokeIT {

    @Test
    void aQueryReturnsWhatWasInserted(PostgresDatabase postgres) throws Exception {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            statement.execute("create temporary table smoke (id int primary key, name text)");
            statement.execute("insert into smoke values (1, 'idem')");

            try (ResultSet rows = statement.executeQuery("select name, version() from smoke where id = 1")) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).isEqualTo("idem");
                assertThat(rows.getString(2)).startsWith("PostgreSQL");
            }
        }
    }
}
