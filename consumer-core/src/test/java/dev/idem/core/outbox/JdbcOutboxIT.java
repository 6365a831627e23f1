package dev.idem.core.outbox;

import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import org.junit.jupiter.api.BeforeEach;

/** The outbox's contract on PostgreSQL. */
@IdemTestKit
class JdbcOutboxIT extends OutboxContract {

    @BeforeEach
    void outbox(PostgresDatabase postgres, TestNames names) {
        dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
        outbox = JdbcOutbox.builder(dataSource).table("outbox_" + Integer.toHexString(names.group().hashCode()))
                .createTable(true).build();
    }
}
