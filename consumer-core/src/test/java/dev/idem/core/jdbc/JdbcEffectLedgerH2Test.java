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
    void aTableNameThatIsNotAnIdentifierIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> JdbcEffectLedger.builder(LedgerFixture.dataSource("jdbc:h2:mem:x", "", ""))
                .table("idem_effect; drop table users").build())
                .hasMessageStartingWith("table must be a SQL identifier");
        assertThatThrownBy(() -> JdbcEffectLedger.ddl("oracle")).hasMessageContaining("postgresql, mysql or h2");
    }
}
