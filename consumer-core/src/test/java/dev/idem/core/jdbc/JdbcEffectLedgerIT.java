package dev.idem.core.jdbc;

import static dev.idem.core.jdbc.LedgerFixture.delivery;
import static dev.idem.core.jdbc.LedgerFixture.movements;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Delivery;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.DuplicateEffectException;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@IdemTestKit
class JdbcEffectLedgerIT {

    private DataSource dataSource;
    private JdbcEffectLedger ledger;
    private String group;

    @BeforeEach
    void ledger(PostgresDatabase postgres, TestNames names) throws Exception {
        dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
        ledger = JdbcEffectLedger.builder(dataSource).build();
        group = names.group();
    }

    /** Key values unique to this test run: the effect table outlives test runs. */
    private String id(String value) {
        return group + ":" + value;
    }

    @Test
    void theTablesUniqueKeyIsFoundSoTheInsertIsTheCheck() {
        // On PostgreSQL: the ledger's own handler refuses copies, so nothing is asked before it.
        assertThat(ledger.refusesDuplicates(ledger.<String>transactional((d, tx) -> { }))).isTrue();
        assertThat(ledger.refusesDuplicates(d -> { })).isFalse();
    }

    @Test
    void theReadmeShowsWhatDdlPrintsOnPostgreSql() throws IOException {
        // The guide's block (docs/guide/operating.md) after the line naming this output, as it stands
        String marker = "<!-- output: JdbcEffectLedger.ddl() on PostgreSQL, checked by JdbcEffectLedgerIT -->";
        List<String> readme = Files.readAllLines(Path.of(System.getProperty("basedir", "."), "..", "docs", "guide", "operating.md"),
                StandardCharsets.UTF_8);
        int fence = readme.indexOf(marker) + 1;
        assertThat(fence).as("the guide's line '%s'", marker).isPositive();
        assertThat(readme.get(fence)).isEqualTo("```sql");
        List<String> rest = readme.subList(fence + 1, readme.size());
        String shown = String.join("\n", rest.subList(0, rest.indexOf("```")));

        assertThat(shown).as("the guide's ledger DDL (PostgreSQL)").isEqualTo(ledger.ddl().strip());
    }

    @Test
    void anEffectAndItsLedgerRowCommitTogether() throws Exception {
        Delivery<String> delivery = delivery(group, id("order-1"), 7);
        assertThat(ledger.alreadyApplied(delivery)).isFalse();

        ledger.transactional(LedgerFixture.<String>insertMovement()).handle(delivery);

        assertThat(ledger.alreadyApplied(delivery)).isTrue();
        try (Connection connection = dataSource.getConnection()) {
            assertThat(movements(connection, id("order-1"))).isEqualTo(1);
        }
    }

    @Test
    void aSecondEffectIsRefusedAsADuplicateAndNotApplied() throws Exception {
        DeliveryHandler<String> handler = ledger.transactional(LedgerFixture.<String>insertMovement());
        handler.handle(delivery(group, id("order-2"), 1));

        assertThatThrownBy(() -> handler.handle(delivery(group, id("order-2"), 2)))
                .isInstanceOf(DuplicateEffectException.class);

        try (Connection connection = dataSource.getConnection()) {
            assertThat(movements(connection, id("order-2"))).isEqualTo(1);
        }
    }

    @Test
    void aFailingEffectLeavesNoLedgerRowSoTheRetryCanApplyIt() throws Exception {
        Delivery<String> delivery = delivery(group, id("order-3"), 1);
        DeliveryHandler<String> failing = ledger.transactional((d, tx) -> {
            LedgerFixture.<String>insertMovement().handle(d, tx);
            throw new IllegalStateException("payment declined");
        });

        assertThatThrownBy(() -> failing.handle(delivery)).hasMessage("payment declined");

        assertThat(ledger.alreadyApplied(delivery)).isFalse();
        try (Connection connection = dataSource.getConnection()) {
            assertThat(movements(connection, id("order-3"))).isZero();
        }
    }

    @Test
    void aConcurrentDuplicateWaitsForTheFirstAndIsThenRefused() throws Exception {
        CountDownLatch firstInserted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        DeliveryHandler<String> slow = ledger.transactional((d, tx) -> {
            LedgerFixture.<String>insertMovement().handle(d, tx);
            firstInserted.countDown();
            release.await(10, TimeUnit.SECONDS);
        });
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
            try {
                slow.handle(delivery(group, id("order-4"), 1));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(firstInserted.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Throwable> second = CompletableFuture.supplyAsync(() -> {
            try {
                ledger.transactional(LedgerFixture.<String>insertMovement()).handle(delivery(group, id("order-4"), 2));
                return null;
            } catch (Exception e) {
                return e;
            }
        });
        release.countDown();
        first.get(10, TimeUnit.SECONDS);

        assertThat(second.get(10, TimeUnit.SECONDS)).isInstanceOf(DuplicateEffectException.class);
        try (Connection connection = dataSource.getConnection()) {
            assertThat(movements(connection, id("order-4"))).isEqualTo(1);
        }
    }

    @Test
    void oldRowsArePurgedInBatches() throws Exception {
        DeliveryHandler<String> handler = ledger.transactional(LedgerFixture.<String>insertMovement());
        for (int i = 0; i < 25; i++) {
            handler.handle(delivery(group, "old-" + i, i));
        }
        handler.handle(delivery(group, "recent", 99));
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.executeUpdate("update idem_effect set applied_at = applied_at - interval '40 days' "
                    + "where consumer_group = '" + group + "' and idempotency_key like 'old-%'");
        }

        long purged = ledger.purgeOlderThan(Duration.ofDays(30), 10);

        assertThat(purged).isGreaterThanOrEqualTo(25);
        assertThat(ledger.alreadyApplied(delivery(group, "old-3", 0))).isFalse();
        assertThat(ledger.alreadyApplied(delivery(group, "recent", 0))).isTrue();
        assertThatThrownBy(() -> ledger.purgeOlderThan(Duration.ofDays(1), 10))
                .as("a purge younger than the retention would forget effects the done window relies on")
                .hasMessageContaining("retention");
    }

    @Test
    void aDeadLetteredKeyIsRememberedSoALostRedisRecordNeverRepeatsItsSeries() throws Exception {
        // Given a key whose dead letter was recorded in the ledger
        Delivery<String> delivery = delivery(group, id("order-dead"), 1);
        ledger.deadLettered(new dev.idem.core.DeadLetter(delivery.key(), 1L, delivery.envelope(), 5, "attempts exhausted",
                "java.io.IOException", "boom", "", java.time.Instant.now(), java.time.Instant.now()));

        // Then the business check finds it (a redelivery is not run again), a second record is
        // harmless, and a deliberate replay can forget it
        assertThat(ledger.alreadyApplied(delivery)).isTrue();
        ledger.deadLettered(new dev.idem.core.DeadLetter(delivery.key(), 1L, delivery.envelope(), 5, "again", "", "", "",
                java.time.Instant.now(), java.time.Instant.now()));
        assertThat(ledger.forgetDeadLetter(delivery.key())).isTrue();
        assertThat(ledger.alreadyApplied(delivery)).isFalse();
    }
}
