package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRecord;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An operator looks after the outbox: what waits, the dead rows and why, sending them again, purging. */
@IdemTestKit
class OutboxCommandIT {

    @Test
    void aDeadRowIsShownWithItsReasonSentAgainOnceTheTopicExistsAndSentRowsArePurged(
            PostgresDatabase postgres, TestNames names, @TempDir Path home) throws Exception {
        // Given an outbox with three rows, one for a topic that does not exist yet
        String table = "outbox_" + Integer.toHexString(names.group().hashCode());
        DataSource dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
        JdbcOutbox outbox = JdbcOutbox.builder(dataSource).table(table).createTable(true).build();
        try (Connection tx = dataSource.getConnection()) {
            tx.setAutoCommit(false);
            outbox.send(tx, OutboxMessage.to("stock").key("sku-1").value("1"));
            outbox.send(tx, OutboxMessage.to("stock").key("sku-2").value("2"));
            outbox.send(tx, OutboxMessage.to("shipments").key("order-1").value("3").id("shipment-1"));
            tx.commit();
        }
        List<OutboxRecord> published = new ArrayList<>();
        List<String> missing = new ArrayList<>(List.of("shipments"));
        OutboxPublisher publisher = records -> records.stream().map(r -> {
            if (missing.contains(r.destination())) {
                return (OutboxPublisher.Result) new OutboxPublisher.Poison("destination topic " + r.destination()
                        + " does not exist");
            }
            published.add(r);
            return OutboxPublisher.Published.INSTANCE;
        }).toList();
        outbox.relay(publisher).keepSent(java.time.Duration.ofDays(1)).build().publishOnce();
        Operator operator = new Operator(Map.of("IDEM_JDBC_URL", postgres.jdbcUrl(), "IDEM_JDBC_USER", postgres.user(),
                "IDEM_JDBC_PASSWORD", postgres.password(), "IDEM_OUTBOX_TABLE", table), home);

        // The operator sees the dead row and why
        Operator.Run status = operator.idem("outbox", "status");
        assertThat(status.code()).as(status.toString()).isZero();
        assertThat(status.out()).containsPattern("shipments\\s+0\\s+1");
        Operator.Run dead = operator.idem("outbox", "show", "--state", "dead", "-o", "json");
        assertThat(dead.out()).contains("\"id\" : \"shipment-1\"").contains("destination topic shipments does not exist")
                .contains("\"valueBytes\" : 1").doesNotContain("sku-1");

        // Nothing changes without --yes; with it, the dead row goes back to the relay, which publishes it
        assertThat(operator.idem("outbox", "retry").code()).isNotZero();
        Operator.Run retry = operator.idem("outbox", "retry", "--destination", "shipments", "--yes");
        assertThat(retry.out()).as(retry.toString()).contains("1 dead row(s) sent back");
        missing.clear();
        outbox.relay(publisher).keepSent(java.time.Duration.ofDays(1)).build().publishOnce();
        assertThat(published).extracting(OutboxRecord::id).contains("shipment-1").hasSize(3);

        // Sent rows kept for show are purged on demand; rows not yet published never are
        assertThat(operator.idem("outbox", "purge", "--state", "new", "--yes").code()).isNotZero();
        Operator.Run purge = operator.idem("outbox", "purge", "--state", "sent", "--yes");
        assertThat(purge.out()).as(purge.toString()).contains("3 sent row(s) deleted");
        assertThat(outbox.operations().rows(null, null, 10)).isEmpty();
    }
}
