package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetter;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.NonRetryableException;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.RecordingPublisher;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The JDBC ledger failing at the edges of the protocol, on real Redis and PostgreSQL: an outage
 * right after a dead letter is published publishes no second copy, and a key the ledger can never
 * hold (a NUL character) is the message's defect, dead-lettered, instead of a deferral without end.
 */
@IdemTestKit
class LedgerFaultsIT {

    private static final Duration LEASE = Duration.ofSeconds(5);
    private static RedissonClient redisson;
    private PostgresDatabase postgres;
    private final RecordingPublisher deadLetters = new RecordingPublisher();
    private final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @BeforeEach
    void tables(PostgresDatabase postgres) throws Exception {
        this.postgres = postgres;
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** The test database, refusing every new connection while {@code down} is set. */
    private DataSource cuttable(AtomicBoolean down) {
        DataSource real = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && down.get()) {
                        throw new SQLNonTransientConnectionException("Connection refused (test outage)", "08001");
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private String outcomeRow(String group, String key) throws Exception {
        try (Connection connection = postgres.connect();
             var select = connection.prepareStatement("select outcome from idem_effect where consumer_group = ? "
                     + "and topic = 'orders' and idempotency_key = ?")) {
            select.setString(1, group);
            select.setString(2, key);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next() ? rows.getString(1) : null;
            }
        }
    }

    @Test
    void aLedgerOutageRightAfterTheDeadLetterIsPublishedPublishesItOnceAndCompensatesOnceAfterIt(TestNames names)
            throws Exception {
        // Given a poison message, and the ledger's database refusing connections for two seconds from
        // the moment its dead letter is published
        AtomicBoolean down = new AtomicBoolean();
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(cuttable(down)).build();
        AtomicInteger runs = new AtomicInteger();
        IdempotentProcessor<String> processor = ledger.<String>processor((d, tx) -> {
                    runs.incrementAndGet();
                    throw new NonRetryableException("unknown product");
                }).group(names.group()).claims(store).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(letter -> {
                    deadLetters.publish(letter);
                    down.set(true);
                    CompletableFuture.delayedExecutor(2, TimeUnit.SECONDS).execute(() -> down.set(false));
                })
                .compensation(compensated::add).lease(Duration.ofSeconds(1)).build();
        String order = names.topic() + "-order";

        // When the message is delivered, and delivered again every 100 ms until it is settled
        Outcome first = processor.process(envelope(order));
        AtomicInteger deliveries = new AtomicInteger(1);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> {
            deliveries.incrementAndGet();
            return processor.process(envelope(order)).disposition().acknowledges();
        });

        // Then one dead letter and one compensation for tens of deliveries, one run, and the ledger
        // has the key's row after all
        assertThat(first).isInstanceOf(Outcome.Deferred.class);
        assertThat(deliveries.get()).isGreaterThan(10);
        assertThat(deadLetters.published()).hasSize(1);
        assertThat(compensated).hasSize(1);
        assertThat(runs).hasValue(1);
        assertThat(outcomeRow(names.group(), order)).isEqualTo("dead-ok");
        processor.close();
    }

    @Test
    void aKeyTheLedgerCannotHoldIsDeadLetteredAndTheMessagesBehindItAreApplied(TestNames names) throws Exception {
        // Given a ledger table made by hand with keys of at most 16 characters (PostgreSQL refuses a
        // longer one: SQL state 22001), and a long key before five short ones
        String table = "narrow_" + Integer.toHexString(names.group().hashCode() & 0x7fffffff);
        try (Connection connection = postgres.connect(); var statement = connection.createStatement()) {
            statement.execute("create table " + table + " (consumer_group varchar(255) not null, topic varchar(255) "
                    + "not null, idempotency_key varchar(16) not null, fence bigint not null, applied_at timestamp with "
                    + "time zone not null, outcome varchar(8) not null default 'applied', "
                    + "primary key (consumer_group, topic, idempotency_key))");
        }
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(postgres.jdbcUrl(),
                postgres.user(), postgres.password())).table(table).build();
        IdempotentProcessor<String> processor = ledger.processor(LedgerFixture.<String>insertMovement())
                .group(names.group()).claims(store).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(deadLetters).compensation(compensated::add).lease(LEASE).build();
        String prefix = Integer.toHexString(names.topic().hashCode()) + "-";

        try {
            // When the partition's records are processed in order
            Outcome bad = processor.process(envelope(prefix + "a-key-longer-than-the-column"));
            List<Outcome> good = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 5; i++) {
                good.add(processor.process(envelope(prefix + i)));
            }

            // Then the bad record is dead-lettered once with the ledger's reason, and the good ones applied
            assertThat(bad).isInstanceOf(Outcome.DeadLettered.class);
            assertThat(deadLetters.published()).singleElement().satisfies(letter ->
                    assertThat(letter.exceptionMessage()).contains("cannot hold the key"));
            assertThat(compensated).hasSize(1);
            assertThat(good).allMatch(o -> o instanceof Outcome.Applied);
            try (Connection connection = postgres.connect()) {
                assertThat(LedgerFixture.movementsWithPrefix(connection, prefix)).isEqualTo(5);
            }
        } finally {
            processor.close();
            try (Connection connection = postgres.connect(); var statement = connection.createStatement()) {
                statement.execute("drop table " + table);
            }
        }
    }

    @Test
    void keysWithANulOrLoneSurrogatesAreStoredAndAppliedOnceEach(TestNames names) throws Exception {
        // Given keys PostgreSQL cannot store as text (a NUL) or that UTF-8 turns into '?' (lone surrogates)
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(postgres.jdbcUrl(),
                postgres.user(), postgres.password())).build();
        List<String> keys = new CopyOnWriteArrayList<>();
        IdempotentProcessor<String> processor = ledger.<String>processor((d, tx) -> keys.add(d.key().value()))
                .group(names.group()).claims(store).codec(PayloadCodec.utf8())
                .keys((envelope, payload) -> payload.replace("NUL", "\u0000")
                        .replace("SUR0", String.valueOf((char) 0xD800)).replace("SUR1", String.valueOf((char) 0xD801)))
                .deadLetters(deadLetters).compensation(compensated::add).lease(LEASE).build();
        String prefix = names.topic() + "-";

        // When each is delivered twice
        List<Outcome> outcomes = new CopyOnWriteArrayList<>();
        for (int copy = 0; copy < 2; copy++) {
            for (String body : new String[] {"A NUL B", "SUR0", "SUR1"}) {
                outcomes.add(processor.process(envelope(prefix + body)));
            }
        }

        // Then three effects, each once: no key became another
        assertThat(keys).hasSize(3).doesNotHaveDuplicates();
        assertThat(outcomes.subList(0, 3)).allMatch(o -> o instanceof Outcome.Applied);
        assertThat(outcomes.subList(3, 6)).allMatch(o -> o instanceof Outcome.Duplicate);
        assertThat(deadLetters.published()).isEmpty();
        processor.close();
    }
}
