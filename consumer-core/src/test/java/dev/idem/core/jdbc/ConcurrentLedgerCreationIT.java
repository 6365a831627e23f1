package dev.idem.core.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas of a service start together and each creates the ledger (PostgreSQL): every one of them
 * must start, on a schema where nothing exists yet. {@code CREATE ... IF NOT EXISTS} alone is not
 * safe against a concurrent create there (a unique violation in {@code pg_class} or {@code pg_type}).
 */
@IdemTestKit
class ConcurrentLedgerCreationIT {

    private final List<String> schemas = new ArrayList<>();
    private PostgresDatabase postgres;

    @AfterEach
    void dropSchemas() throws SQLException {
        if (postgres != null) {
            try (Connection connection = postgres.connect(); var statement = connection.createStatement()) {
                for (String schema : schemas) {
                    statement.execute("drop schema if exists " + schema + " cascade");
                }
            }
        }
    }

    private String freshSchema(PostgresDatabase postgres) throws SQLException {
        this.postgres = postgres;
        String schema = "idem_ddl_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection connection = postgres.connect(); var statement = connection.createStatement()) {
            statement.execute("create schema " + schema);
        }
        schemas.add(schema);
        return schema;
    }

    @Test
    void eightThreadsCreatingTheLedgerAtOnceOnAFreshSchemaAllStart(PostgresDatabase postgres) throws Exception {
        DataSource dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
        for (int round = 0; round < 10; round++) {
            String table = freshSchema(postgres) + ".idem_effect";

            List<Throwable> failures = ConcurrentCreation.build(dataSource, table, 8);

            assertThat(failures).as("round %d: builds that failed", round).isEmpty();
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).table(table).build();
            assertThat(ledger.refusesDuplicates(ledger.<String>transactional((d, tx) -> { })))
                    .as("the created table has its unique key").isTrue();
        }
    }

    @Test
    void threeProcessesStartedTogetherAllCreateTheLedger(PostgresDatabase postgres, @TempDir Path logs)
            throws Exception {
        for (int round = 0; round < 5; round++) {
            String table = freshSchema(postgres) + ".idem_effect";
            // Far enough ahead for three JVMs to start and load the driver on two busy cores.
            long startAt = System.currentTimeMillis() + 4_000;
            List<Process> processes = new ArrayList<>();
            List<Path> outputs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Path output = logs.resolve("round-" + round + "-process-" + i + ".log");
                outputs.add(output);
                processes.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m", "-cp", System.getProperty("java.class.path"), LedgerCreatorMain.class.getName(),
                        postgres.jdbcUrl(), postgres.user(), postgres.password(), table, Long.toString(startAt))
                        .redirectErrorStream(true).redirectOutput(output.toFile()).start());
            }

            for (int i = 0; i < 3; i++) {
                assertThat(processes.get(i).waitFor(60, TimeUnit.SECONDS)).as("process %d ended", i).isTrue();
                assertThat(processes.get(i).exitValue()).as("round %d, process %d: %s", round, i, read(outputs.get(i)))
                        .isZero();
            }
        }
    }

    @Test
    void aDdlErrorIsReportedAsWhatItIsNotAsAMissingTable(PostgresDatabase postgres) {
        DataSource dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());

        assertThatThrownBy(() -> JdbcEffectLedger.builder(dataSource).table("no_such_schema_here.idem_effect")
                .createTable(true).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("could not be created")
                .hasMessageContaining("create table if not exists no_such_schema_here.idem_effect")
                .hasMessageContaining("schema \"no_such_schema_here\" does not exist")
                .hasMessageNotContaining("cannot be read");
    }

    private static String read(Path output) throws IOException {
        return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "(no output)";
    }
}
