package dev.idem.core.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** What the outbox promises on a real database: relays in several processes share one table. */
abstract class OutboxContract {

    private static final int ROWS = 10_000;
    private static final int KEYS = 200;

    /** The database, set by the subclass before each test. */
    protected DataSource dataSource;
    /** An outbox on a table of its own, with its tables created, set by the subclass before each test. */
    protected JdbcOutbox outbox;

    /**
     * Three relays on one table, 10,000 rows on 200 keys written while they run, with the broker down
     * for a while in the middle: every row is published, none twice (each partition is worked on by
     * one relay at a time), and each key's rows in the order they were written.
     */
    @Test
    void threeRelaysPublishEveryRowOnceAndInOrderPerKey() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        List<OutboxRelay> relays = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            relays.add(outbox.relay(publisher).pollInterval(Duration.ofMillis(20)).batchSize(100)
                    .maxBackoff(Duration.ofMillis(200)).build().start());
        }
        try {
            write(0, ROWS / 2);
            publisher.down = true;
            write(ROWS / 2, ROWS);
            Thread.sleep(2_000);
            long duringOutage = publisher.published.size();
            publisher.down = false;

            await().atMost(Duration.ofMinutes(2)).until(() -> publisher.published.size() >= ROWS
                    && outbox.status().backlog() == 0);

            assertThat(duringOutage).isLessThan(ROWS);
        } finally {
            relays.forEach(OutboxRelay::close);
        }
        List<String> ids = publisher.published.stream().map(OutboxRecord::id).toList();
        assertThat(ids).hasSize(ROWS).doesNotHaveDuplicates();
        Map<String, List<Integer>> perKey = new HashMap<>();
        for (OutboxRecord record : publisher.published) {
            perKey.computeIfAbsent(record.key(), k -> new CopyOnWriteArrayList<>())
                    .add(Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8)));
        }
        assertThat(perKey).hasSize(KEYS);
        perKey.forEach((key, values) -> assertThat(values).as(key).isSorted());
        assertThat(relays.stream().mapToLong(OutboxRelay::published).sum()).isEqualTo(ROWS);
        assertThat(relays.stream().filter(r -> r.published() > 0).count()).as("relays that published").isGreaterThan(1);
    }

    /** A row written by a transaction that rolls back is never published (no ghost). */
    @Test
    void aRolledBackTransactionSendsNothing() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        try (Connection tx = dataSource.getConnection()) {
            tx.setAutoCommit(false);
            outbox.send(tx, OutboxMessage.to("stock").key("k").value("ghost"));
            tx.rollback();
        }
        try (Connection tx = dataSource.getConnection()) {
            tx.setAutoCommit(false);
            outbox.send(tx, OutboxMessage.to("stock").key("k").value("real"));
            tx.commit();
        }

        outbox.relay(publisher).build().publishOnce();

        assertThat(publisher.published).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("real");
    }

    private void write(int from, int to) throws SQLException {
        try (Connection tx = dataSource.getConnection()) {
            tx.setAutoCommit(false);
            for (int i = from; i < to; i++) {
                outbox.send(tx, OutboxMessage.to("stock").key("sku-" + (i % KEYS)).value(Integer.toString(i)));
                if (i % 50 == 49) {
                    tx.commit();
                }
            }
            tx.commit();
        }
    }

}
