package dev.idem.core.jdbc;

import dev.idem.core.spi.CompensationOutcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.DeliveryHandler;
import dev.idem.core.DuplicateEffectException;
import java.sql.Connection;
import java.sql.DriverManager;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.memory.InMemoryClaimStore;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The shipped H2 DDL works and H2's duplicate-key error is recognised (the demo runs on H2). */
class JdbcEffectLedgerH2Test {

    @Test
    void eightThreadsCreatingTheLedgerAtOnceAllStart() throws Exception {
        for (int round = 0; round < 10; round++) {
            String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
            try (Connection keepAlive = DriverManager.getConnection(url)) {
                List<Throwable> failures = ConcurrentCreation.build(LedgerFixture.dataSource(url, "", ""), "idem_effect", 8);

                assertThat(failures).as("round %d: builds that failed", round).isEmpty();
            }
        }
    }

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

    /**
     * The ledger's own handler inserts the row first, so the processor asks no query before it: one
     * connection (one transaction) per new message. When the claim store has forgotten a finished
     * key, the row refuses the copy, which is a duplicate without an effect.
     */
    @Test
    void aNewMessageCostsOneTransactionAndACopyTheStoreForgotIsRefusedByTheRow() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            AtomicInteger connections = new AtomicInteger();
            DataSource plain = LedgerFixture.dataSource(url, "", "");
            DataSource counting = (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                    DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                        if (method.getName().equals("getConnection")) {
                            connections.incrementAndGet();
                        }
                        return method.invoke(plain, args);
                    });
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(counting).build();
            connections.set(0);

            try (IdempotentProcessor<String> processor = processor(ledger)) {
                assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Applied.class);
            }
            assertThat(connections.get()).as("connections for one new message").isEqualTo(1);

            // A processor with an empty claim store: Redis lost the finished key.
            try (IdempotentProcessor<String> processor = processor(ledger)) {
                assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Duplicate.class);
            }
            assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(1);
        }
    }

    @Test
    void aLedgerTableWithoutItsUniqueKeyIsAskedBeforeTheHandler() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            try (var statement = keepAlive.createStatement()) {
                statement.execute("create table keyless_ledger (consumer_group varchar(255) not null, topic varchar(255) "
                        + "not null, idempotency_key varchar(512) not null, fence bigint not null, applied_at "
                        + "timestamp with time zone not null, outcome varchar(8) default 'applied' not null)");
            }
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", ""))
                    .table("keyless_ledger").build();
            assertThat(ledger.refusesDuplicates(ledger.transactional(LedgerFixture.insertMovement()))).isFalse();
            try (IdempotentProcessor<String> processor = processor(ledger)) {
                assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Applied.class);
            }
            // Redis lost the key: without a unique key, only the check before the handler finds it.
            try (IdempotentProcessor<String> processor = processor(ledger)) {
                assertThat(processor.process(envelope("order-1"))).isInstanceOf(Outcome.Duplicate.class);
            }
            assertThat(LedgerFixture.movements(keepAlive, "order-1")).isEqualTo(1);
        }
    }

    @Test
    void aRefusalAnInterceptorWrapsStillFinishesAPendingCompensation() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", "")).build();
            Envelope envelope = envelope("order-9");
            var key = new dev.idem.core.IdempotencyKey("inventory", "orders", "order-9");
            // Dead-lettered earlier; the compensation never recorded an outcome, and Redis lost the key.
            ledger.deadLettered(new dev.idem.core.DeadLetter(key, 1L, envelope, 5, "attempts exhausted", "", "", "",
                    java.time.Instant.now(), java.time.Instant.now()));
            List<dev.idem.core.DeadLetter> compensated = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (IdempotentProcessor<String> processor = ledger.processor(LedgerFixture.<String>insertMovement())
                    .group("inventory").claims(InMemoryClaimStore.create()).codec(PayloadCodec.utf8())
                    .keys(KeySource.payload(p -> p)).compensation(compensated::add)
                    .interceptor((delivery, proceed) -> {
                        try {
                            proceed.proceed();
                        } catch (Exception e) {
                            throw new IllegalStateException("timed handler failed", e);   // wraps the refusal
                        }
                    })
                    .deadLetters(letter -> {
                        throw new AssertionError("the dead letter must not be published again: " + letter);
                    }).build()) {
                assertThat(processor.process(envelope)).isInstanceOf(Outcome.DeadLettered.class);
            }
            assertThat(compensated).extracting(letter -> letter.key().value()).containsExactly("order-9");
            assertThat(ledger.compensationPending(LedgerFixture.delivery("inventory", "order-9", 1))).isEmpty();
            assertThat(LedgerFixture.movements(keepAlive, "order-9")).isZero();
        }
    }

    private static IdempotentProcessor<String> processor(JdbcEffectLedger ledger) {
        return ledger.processor(LedgerFixture.<String>insertMovement()).group("inventory")
                .claims(InMemoryClaimStore.create()).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(letter -> {
                    throw new AssertionError("no dead letter expected: " + letter);
                }).build();
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, "7", "orders-0@7", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aDeadLetteredKeysCompensationIsPendingUntilItsOutcomeIsRecorded() throws Exception {
        String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(url)) {
            LedgerFixture.createTables(keepAlive, "h2");
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(url, "", "")).build();
            var delivery = LedgerFixture.delivery("inventory", "order-1", 1);
            var letter = new dev.idem.core.DeadLetter(delivery.key(), 1L, delivery.envelope(), 5, "attempts exhausted",
                    "", "", "", java.time.Instant.now(), java.time.Instant.now());

            ledger.deadLettered(letter);
            assertThat(ledger.alreadyApplied(delivery)).isTrue();
            assertThat(ledger.compensationPending(delivery)).isPresent();

            ledger.compensated(letter, CompensationOutcome.OK);
            assertThat(ledger.alreadyApplied(delivery)).isTrue();
            assertThat(ledger.compensationPending(delivery)).isEmpty();

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
    void aTableNameTheDatabaseWouldCutIsRefusedNamingTheSetting() {
        // PostgreSQL cuts names at 63 characters: this one and a table sharing its first 63 would be one.
        String long_ = "ledger_" + "x".repeat(50);
        assertThatThrownBy(() -> JdbcEffectLedger.builder(LedgerFixture.dataSource("jdbc:h2:mem:x", "", ""))
                .table(long_).build())
                .hasMessageStartingWith("table must be at most 52 characters");
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
