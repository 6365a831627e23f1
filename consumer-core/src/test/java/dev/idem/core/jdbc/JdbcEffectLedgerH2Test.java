package dev.idem.core.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.DeliveryHandler;
import dev.idem.core.DuplicateEffectException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The shipped H2 DDL works and H2's duplicate-key error is recognised (the demo runs on H2). */
class JdbcEffectLedgerH2Test {

    @Test
    void theH2LedgerRefusesASecondEffect() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            DataSource dataSource = LedgerFixture.dataSource(url, "", "");
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
            DeliveryHandler<String> handler = ledger.transactional(LedgerFixture.insertMovement());

            handler.handle(LedgerFixture.delivery("inventory", "order-1", 1));

            assertThatThrownBy(() -> handler.handle(LedgerFixture.delivery("inventory", "order-1", 2)))
                    .isInstanceOf(DuplicateEffectException.class);
            assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(1);
        }
    }

    @Test
    void aDeadLetteredKeysCompensationIsPendingUntilItsOutcomeIsRecorded() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", "")).build();
            var delivery = LedgerFixture.delivery("inventory", "order-1", 1);
            var letter = new dev.idem.core.DeadLetter(delivery.key(), delivery.envelope(), 5, "attempts exhausted",
                    "", "", "", java.time.Instant.now(), java.time.Instant.now());

            ledger.deadLettered(letter);
            assertThat(ledger.alreadyApplied(delivery)).isTrue();
            assertThat(ledger.compensationPending(delivery)).isTrue();

            ledger.compensated(letter, "ok");
            assertThat(ledger.alreadyApplied(delivery)).isTrue();
            assertThat(ledger.compensationPending(delivery)).isFalse();

            assertThat(ledger.forgetDeadLetter(delivery.key())).isTrue();
            assertThat(ledger.alreadyApplied(delivery)).isFalse();
        }
    }

    @Test
    void aTableNameThatIsNotAnIdentifierIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> JdbcEffectLedger.builder(LedgerFixture.dataSource("jdbc:h2:mem:x", "", ""))
                .table("idem_effect; drop table users").build())
                .hasMessageStartingWith("table must be a SQL identifier");
    }

    @Test
    void aMissingLedgerTableFailsAtBuildNamingTheTable() {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";

        assertThatThrownBy(() -> JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", "")).table("no_such_ledger")
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ledger table 'no_such_ledger' cannot be read");
    }

    @Test
    void theDdlUsesTheBuildersTableNameAndTheDatabaseFromTheConnection() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", ""))
                    .table("orders_ledger").createTable(true).build();

            assertThat(ledger.ddl()).contains("create table if not exists orders_ledger")
                    .contains("orders_ledger_applied_at").doesNotContain("idem_effect");
            try (var rows = keepAlive.createStatement().executeQuery("select count(*) from orders_ledger")) {
                assertThat(rows.next()).isTrue();
            }
        }
    }

    @Test
    void aLedgerErrorIsInfrastructureTroubleNotTheMessagesFault() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", "")).build();
            keepAlive.createStatement().execute("drop table idem_effect");

            assertThatThrownBy(() -> ledger.transactional(LedgerFixture.<String>insertMovement())
                    .handle(LedgerFixture.delivery("inventory", "order-1", 1)))
                    .isInstanceOf(dev.idem.core.InfrastructureException.class);
        }
    }
}
