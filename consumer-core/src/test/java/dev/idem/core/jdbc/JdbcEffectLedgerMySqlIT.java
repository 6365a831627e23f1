package dev.idem.core.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Delivery;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.DuplicateEffectException;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger on MySQL's rules (MariaDB): keys compare byte for byte, so case and accents make
 * different effects, and the widest topic Kafka allows fits the primary key. Uses
 * {@code IDEM_TEST_MYSQL_URL} (default {@code jdbc:mariadb://127.0.0.1:3306/test} as root); skipped
 * when no server answers unless {@code IDEM_TESTKIT_REQUIRE} contains {@code mysql}.
 */
class JdbcEffectLedgerMySqlIT {

    private static final String URL = System.getenv().getOrDefault("IDEM_TEST_MYSQL_URL",
            "jdbc:mariadb://127.0.0.1:3306/test");
    private static final String USER = System.getenv().getOrDefault("IDEM_TEST_MYSQL_USER", "root");
    private static final String PASSWORD = System.getenv().getOrDefault("IDEM_TEST_MYSQL_PASSWORD", "");

    private final String table = "idem_effect_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private DataSource dataSource;
    private JdbcEffectLedger ledger;

    @BeforeEach
    void ledgerOnMySqlRules() {
        try (Connection probe = DriverManager.getConnection(URL, USER, PASSWORD)) {
            assertThat(probe.isValid(2)).isTrue();
        } catch (SQLException e) {
            boolean required = System.getenv().getOrDefault("IDEM_TESTKIT_REQUIRE", "").contains("mysql");
            if (required) {
                throw new IllegalStateException("MySQL/MariaDB required but not reachable at " + URL, e);
            }
            Assumptions.abort("no MySQL/MariaDB at " + URL + ": " + e.getMessage());
        }
        dataSource = LedgerFixture.dataSource(URL, USER, PASSWORD);
        ledger = JdbcEffectLedger.builder(dataSource).table(table).createTable(true).build();
    }

    @AfterEach
    void dropTable() throws SQLException {
        if (dataSource != null) {
            try (Connection connection = dataSource.getConnection()) {
                connection.createStatement().execute("drop table if exists " + table);
            }
        }
    }

    private static Delivery<String> delivery(String topic, String value) {
        return new Delivery<>(new IdempotencyKey("inventory", topic, value), 1, 1,
                new Envelope(topic, 0, "1", topic + "-0@1", 0, Map.of(), new byte[0]), value);
    }

    @Test
    void eightThreadsCreatingTheLedgerAtOnceAllStart() throws Exception {
        try (Connection connection = dataSource.getConnection()) {
            connection.createStatement().execute("drop table " + table);
        }
        for (int round = 0; round < 5; round++) {
            List<Throwable> failures = ConcurrentCreation.build(dataSource, table, 8);

            assertThat(failures).as("round %d: builds that failed", round).isEmpty();
            try (Connection connection = dataSource.getConnection()) {
                connection.createStatement().execute("drop table " + table);
            }
        }
    }

    @Test
    void effectsAppliedAfter2038AreRecordedAndPurged() throws Exception {
        // MySQL's timestamp type ends on 2038-01-19: a ledger still running then must not stop.
        Instant after2038 = Instant.parse("2040-03-01T12:00:00Z");
        JdbcEffectLedger later = JdbcEffectLedger.builder(dataSource).table(table)
                .clock(Clock.fixed(after2038, ZoneOffset.UTC)).build();

        later.<String>transactional((d, tx) -> { }).handle(delivery("orders", "order-2040"));

        assertThat(later.alreadyApplied(delivery("orders", "order-2040"))).isTrue();
        JdbcEffectLedger muchLater = JdbcEffectLedger.builder(dataSource).table(table)
                .clock(Clock.fixed(after2038.plus(Duration.ofDays(31)), ZoneOffset.UTC)).build();
        assertThat(muchLater.purgeExpired(100)).isEqualTo(1);
        assertThat(later.alreadyApplied(delivery("orders", "order-2040"))).isFalse();
    }

    @Test
    void theTablesUniqueKeyIsFoundSoTheInsertIsTheCheck() {
        // On MariaDB: the ledger's own handler refuses copies, so nothing is asked before it.
        assertThat(ledger.refusesDuplicates(ledger.<String>transactional((d, tx) -> { }))).isTrue();
        assertThat(ledger.refusesDuplicates(d -> { })).isFalse();
    }

    @Test
    void keysThatDifferOnlyInCaseOrAccentsAreDifferentEffects() throws Exception {
        DeliveryHandler<String> handler = ledger.<String>transactional((d, tx) -> { });

        for (String value : new String[] {"ABC", "abc", "José", "Jose", "straße", "strasse"}) {
            handler.handle(delivery("orders", value));
        }

        for (String value : new String[] {"ABC", "abc", "José", "Jose", "straße", "strasse"}) {
            assertThat(ledger.alreadyApplied(delivery("orders", value))).as(value).isTrue();
        }
        assertThat(ledger.alreadyApplied(delivery("orders", "Abc"))).isFalse();
        assertThatThrownBy(() -> handler.handle(delivery("orders", "abc"))).isInstanceOf(DuplicateEffectException.class);
    }

    @Test
    void theWidestKafkaTopicAndTheLongestKeyFitThePrimaryKey() throws Exception {
        String topic = "t".repeat(249);
        String key = "é".repeat(IdempotencyKey.MAX_VALUE_LENGTH);

        ledger.<String>transactional((d, tx) -> { }).handle(delivery(topic, key));

        assertThat(ledger.alreadyApplied(delivery(topic, key))).isTrue();
    }
}
