package dev.idem.core.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Backoff;
import dev.idem.core.Delivery;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.jdbc.LedgerTransactions;
import dev.idem.core.memory.InMemoryClaimStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The outbox on H2: what commits is published once per relay pass, in order; what rolls back never is. */
class JdbcOutboxH2Test {

    private Connection keepAlive;
    private DataSource dataSource;
    private JdbcOutbox outbox;

    @BeforeEach
    void outbox() throws SQLException {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        keepAlive = DriverManager.getConnection(url);
        dataSource = LedgerFixture.dataSource(url, "", "");
        outbox = JdbcOutbox.builder(dataSource).createTable(true).build();
    }

    @AfterEach
    void close() throws SQLException {
        keepAlive.close();
    }

    @Test
    void aRolledBackRunWritesNothingAndItsReRunWritesTheSameIds() throws Exception {
        LedgerFixture.createTables(keepAlive, "h2");
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
        List<List<String>> runs = new CopyOnWriteArrayList<>();
        try (IdempotentProcessor<String> processor = ledger.processor((Delivery<String> delivery, Connection tx) -> {
            runs.add(sendTwo(tx));
            if (runs.size() == 1) {
                throw new IllegalStateException("the warehouse said no, this time");
            }
        }).group("inventory").claims(InMemoryClaimStore.create()).codec(PayloadCodec.utf8())
                .keys(KeySource.payload(p -> p)).backoff(Backoff.fixed(Duration.ofMillis(1))).deadLetters(letter -> {
                    throw new AssertionError("no dead letter expected: " + letter);
                }).build()) {

            assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Retrying.class);
            assertThat(rows()).as("rows of the rolled-back run").isZero();
            Thread.sleep(5);
            assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Applied.class);
        }

        assertThat(runs).hasSize(2);
        assertThat(runs.get(1)).isEqualTo(runs.get(0)).doesNotHaveDuplicates();
        assertThat(rows()).isEqualTo(2);
    }

    /**
     * Redis alone (no ledger), Redis lost the finished key, and the relay keeps sent rows: the
     * re-run's first send finds its id in the outbox and fails, so its effect rolls back with it (a
     * failure, counted, visible in the dead letter if it repeats; never a second effect).
     */
    @Test
    void aReRunOfACommittedRunFailsOnItsOutboxIdsAndAppliesNothing() throws Exception {
        LedgerFixture.createTables(keepAlive, "h2");
        LedgerTransactions transactions = LedgerTransactions.of(dataSource);
        DeliveryHandler<String> handler = delivery -> transactions.inTransaction(tx -> {
            LedgerFixture.<String>insertMovement().handle(delivery, tx);
            sendTwo(tx);
        });
        for (int store = 0; store < 2; store++) {
            try (IdempotentProcessor<String> processor = IdempotentProcessor.builder(handler).group("inventory")
                    .claims(InMemoryClaimStore.create()).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                    .dedupCheck(dev.idem.core.DedupCheck.none()).deadLetters(letter -> {
                        throw new AssertionError("no dead letter expected: " + letter);
                    }).build()) {
                Outcome outcome = processor.process(envelope("order-1"));

                if (store == 0) {
                    assertThat(outcome).isInstanceOf(Outcome.Applied.class);
                } else {
                    assertThat(outcome).isInstanceOf(Outcome.Retrying.class);
                    assertThat(((Outcome.Retrying) outcome).cause()).hasMessageContaining("committed its sends before");
                }
            }
        }
        assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(1);
        assertThat(rows()).isEqualTo(2);
    }

    @Test
    void outsideAHandlerAnIdGivenTwiceIsRefused() throws Exception {
        inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").value("1").id("event-1"))), true);

        assertThatThrownBy(() -> inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").value("2")
                .id("event-1"))), true)).isInstanceOf(SQLException.class).hasMessageContaining("is in idem_outbox already");
        assertThat(rows()).isEqualTo(1);
    }

    @Test
    void anOutboxOnTheCallersTransactionWritesThereAndRefusesWithoutOne() throws Exception {
        Connection[] current = {null};
        Outbox onCurrent = outbox.on(() -> {
            if (current[0] == null) {
                throw new IllegalStateException("no transaction");
            }
            return current[0];
        });

        inTransaction(tx -> {
            current[0] = tx;
            return List.of(onCurrent.send(OutboxMessage.to("stock").value("1").id("event-1")));
        }, false);
        assertThat(rows()).as("rolled back with the caller's transaction").isZero();
        inTransaction(tx -> {
            current[0] = tx;
            return List.of(onCurrent.send(OutboxMessage.to("stock").value("1").id("event-1")));
        }, true);
        current[0] = null;

        assertThat(rows()).isEqualTo(1);
        assertThatThrownBy(() -> onCurrent.send(OutboxMessage.to("stock").value("2")))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> inTransaction(tx -> {
            current[0] = tx;
            return List.of(onCurrent.send(OutboxMessage.to("stock").value("2").id("event-1")));
        }, true)).isInstanceOf(OutboxException.class).hasMessageContaining("is in idem_outbox already")
                .satisfies(e -> assertThat(((OutboxException) e).sqlException().getSQLState()).isNotNull());
    }

    @Test
    void theRelayPublishesEachCommittedRowInOrderAndDeletesIt() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        for (int i = 0; i < 30; i++) {
            int n = i;
            inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("sku-" + (n % 3))
                    .value("move-" + n).header("type", "StockMoved"))), true);
        }
        OutboxRelay relay = outbox.relay(publisher).batchSize(4).build();

        int published = 0;
        for (int pass = 0; pass < 20 && published < 30; pass++) {
            published += relay.publishOnce();
        }

        assertThat(published).isEqualTo(30);
        assertThat(rows()).isZero();
        for (int k = 0; k < 3; k++) {
            String key = "sku-" + k;
            List<Integer> moves = publisher.published.stream().filter(r -> key.equals(r.key()))
                    .map(r -> Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8).substring(5))).toList();
            assertThat(moves).as(key).hasSize(10).isSorted();
        }
        assertThat(publisher.published.get(0).headers()).containsEntry("type", "StockMoved");
        assertThat(relay.publishOnce()).isZero();
    }

    @Test
    void aPoisonRowGoesDeadWithItsReasonAndHoldsUpNothing() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of("nowhere"));
        inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("nowhere").key("k").value("lost")),
                outbox.send(tx, OutboxMessage.to("stock").key("k").value("kept"))), true);
        OutboxRelay relay = outbox.relay(publisher).build();

        relay.publishOnce();

        assertThat(publisher.published).extracting(OutboxRecord::destination).containsExactly("stock");
        OutboxStatus status = outbox.status();
        assertThat(status.dead()).isEqualTo(1);
        assertThat(status.backlog()).isZero();
        assertThat(relay.deadLettered()).isEqualTo(1);
        assertThat(lastError("nowhere")).isEqualTo("destination topic nowhere does not exist");
    }

    @Test
    void whileTheBrokerIsDownRowsWaitAndAreCountedThenTheyDrain() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        publisher.down = true;
        inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("k").value("v"))), true);
        // A destination that failed rests the shorter of a second and maxBackoff before it is tried again.
        OutboxRelay relay = outbox.relay(publisher).maxBackoff(Duration.ofMillis(5)).build();

        relay.publishOnce();
        Thread.sleep(10);
        relay.publishOnce();
        OutboxStatus waiting = outbox.status();
        publisher.down = false;
        Thread.sleep(10);
        relay.publishOnce();

        assertThat(waiting.backlog()).isEqualTo(1);
        assertThat(waiting.oldestUnsentAge()).isPresent();
        assertThat(relay.retried()).isEqualTo(2);
        assertThat(publisher.published).hasSize(1);
        assertThat(publisher.published.get(0).attempts()).isEqualTo(2);
        assertThat(outbox.status().backlog()).isZero();
    }

    /** The oldest rows failing every pass (their topic still being created) do not hold up the rest. */
    @Test
    void aDestinationThatKeepsFailingRestsWhileTheOthersArePublished() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        publisher.failing.add("orders-v2");
        for (int i = 0; i < 3; i++) {
            int n = i;
            inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("orders-v2").key("k" + n).value("new"))), true);
        }
        inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("k").value("moved"))), true);
        OutboxRelay relay = outbox.relay(publisher).batchSize(2).build();

        relay.publishOnce();
        relay.publishOnce();

        assertThat(publisher.published).extracting(OutboxRecord::destination).containsExactly("stock");
        assertThat(outbox.status().backlog()).isEqualTo(3);
    }

    @Test
    void keptRowsAreMarkedSentAndLeaveTheBacklog() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("k").value("v"))), true);

        outbox.relay(publisher).keepSent(Duration.ofHours(1)).build().publishOnce();

        assertThat(rows()).isEqualTo(1);
        assertThat(outbox.status().backlog()).isZero();
        assertThat(publisher.published).hasSize(1);
    }

    @Test
    void theStartedRelayPublishesWithoutBeingAsked() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (OutboxRelay relay = outbox.relay(publisher).pollInterval(Duration.ofMillis(20)).meterRegistry(registry)
                .build().start()) {
            inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("k").value("v"))), true);
            relay.wake();
            await().atMost(Duration.ofSeconds(10)).until(() -> !publisher.published.isEmpty());
            assertThat(relay.isRunning()).isTrue();
            assertThat(relay.lastStatus()).isPresent();
        }
        assertThat(publisher.published).hasSize(1);
        assertThat(registry.get("idem.outbox.published").tag("table", "idem_outbox").functionCounter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("idem.outbox.oldest.unsent.age").gauge()).isNotNull();
    }

    @Test
    void healthIsDownWhileRowsWaitTooLongAndWhenTheRelayIsNotRunning() throws Exception {
        RecordingPublisher publisher = new RecordingPublisher(Set.of());
        publisher.down = true;
        inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("k").value("v"))), true);
        OutboxRelay relay = outbox.relay(publisher).pollInterval(Duration.ofMillis(10))
                .maxBackoff(Duration.ofMillis(20)).build();
        assertThat(relay.health(Duration.ofMinutes(5)).up()).as("not started").isFalse();

        relay.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> relay.health(Duration.ofMillis(300)).detail()
                    .contains("has waited"));

            assertThat(relay.health(Duration.ofMillis(300)).up()).isFalse();
            assertThat(relay.health(Duration.ofMinutes(5)).up()).isTrue();
        } finally {
            relay.close();
        }
        assertThat(relay.health(Duration.ofMinutes(5))).satisfies(h -> {
            assertThat(h.up()).isFalse();
            assertThat(h.detail()).contains("not running");
        });
    }

    @Test
    void healthIsDownWhenNoPassCompletesForLongerThanTheMaxAge() throws Exception {
        OutboxRelay relay = outbox.relay(new RecordingPublisher(Set.of())).pollInterval(Duration.ofMillis(10))
                .maxBackoff(Duration.ofMillis(20)).build().start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> relay.health(Duration.ofMillis(300)).up());
            try (Statement statement = keepAlive.createStatement()) {
                statement.execute("drop table idem_outbox_relay");   // every pass with rows to publish fails
            }
            inTransaction(tx -> List.of(outbox.send(tx, OutboxMessage.to("stock").key("k").value("v"))), true);

            await().atMost(Duration.ofSeconds(10)).until(() -> !relay.health(Duration.ofMillis(300)).up());
            assertThat(relay.health(Duration.ofMillis(300)).detail()).contains("has not completed a pass")
                    .contains("IDEM_OUTBOX_RELAY");
            assertThat(relay.health(Duration.ofMinutes(5)).up()).as("within the max age").isTrue();
        } finally {
            relay.close();
        }
    }

    @Test
    void badSettingsAreNamed() {
        assertThatThrownBy(() -> JdbcOutbox.builder(dataSource).table("idem outbox").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table must be a SQL identifier");
        assertThatThrownBy(() -> JdbcOutbox.builder(dataSource).table("missing_outbox").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot be read");
        assertThatThrownBy(() -> outbox.relay(new RecordingPublisher(Set.of())).batchSize(0).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batchSize");
        assertThatThrownBy(() -> OutboxMessage.to("stock").header(OutboxHeaders.MESSAGE_ID, "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("set by the outbox");
    }

    private List<String> sendTwo(Connection tx) throws SQLException {
        return List.of(outbox.send(tx, OutboxMessage.to("stock").key("sku-1").value("reserved")),
                outbox.send(tx, OutboxMessage.to("audit").value("order-1 reserved")));
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, "7", "orders-0@7", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    private interface Work {
        List<String> run(Connection tx) throws SQLException;
    }

    private List<String> inTransaction(Work work, boolean commit) throws SQLException {
        try (Connection tx = dataSource.getConnection()) {
            tx.setAutoCommit(false);
            List<String> ids = new ArrayList<>(work.run(tx));
            if (commit) {
                tx.commit();
            } else {
                tx.rollback();
            }
            return ids;
        }
    }

    private int rows() throws SQLException {
        try (Statement statement = keepAlive.createStatement();
             ResultSet rows = statement.executeQuery("select count(*) from idem_outbox")) {
            rows.next();
            return rows.getInt(1);
        }
    }

    private String lastError(String destination) throws SQLException {
        try (Statement statement = keepAlive.createStatement();
             ResultSet rows = statement.executeQuery("select last_error from idem_outbox where destination = '"
                     + destination + "'")) {
            rows.next();
            return rows.getString(1);
        }
    }

}
