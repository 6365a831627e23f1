package dev.idem.kafka.kill;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.KafkaOutboxPublisher;
import dev.idem.redis.Guards;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * kill -9 of a consumer process after its handlers committed and before its relay marked their
 * rows (before the broker had them, or after): the rows wait in the table; a relay started after
 * publishes each, and a consumer downstream keyed on the outbox id applies each once.
 */
@IdemTestKit
class OutboxAfterKillIT {

    private static final int ORDERS = 20;
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @Test
    void killedBetweenTheCommitAndThePublicationTheMessagesGoOutAfterwards(KafkaBroker kafka, RedisEndpoint redis,
                                                                          PostgresDatabase postgres, TestNames names)
            throws Exception {
        List<TopicMessage> sent = killedThenRelayed(kafka, redis, postgres, names, "before-publish");

        assertThat(sent).hasSize(ORDERS);
    }

    @Test
    void killedAfterThePublicationBeforeTheMarkTheCopiesCarryTheSameIds(KafkaBroker kafka, RedisEndpoint redis,
                                                                        PostgresDatabase postgres, TestNames names)
            throws Exception {
        List<TopicMessage> sent = killedThenRelayed(kafka, redis, postgres, names, "after-publish");

        assertThat(sent.size()).as("published twice: by the killed relay, then by the next").isGreaterThan(ORDERS);
    }

    private List<TopicMessage> killedThenRelayed(KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres,
                                                 TestNames names, String mode) throws Exception {
        String orders = names.topic();
        String shipments = orders + "-shipments";
        kafka.createTopic(orders, 2);
        kafka.createTopic(shipments, 2);
        String table = "outbox_" + Integer.toHexString(names.group().hashCode());
        String applied = "shipped_" + Integer.toHexString(names.group().hashCode());
        DataSource dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
            connection.createStatement().execute("create table " + applied + " (order_id varchar(255) not null)");
        }
        JdbcOutbox outbox = JdbcOutbox.builder(dataSource).table(table).createTable(true).build();
        produce(kafka, orders, names);
        Path out = Files.createTempFile("outbox-child-", ".log");

        // Given a consumer process whose handlers commit and whose relay never marks a row
        Process child = child(kafka, redis, postgres, names, orders, shipments, table, out, mode);
        try {
            await().atMost(Duration.ofSeconds(90)).until(() -> lines(out, "applied ").size() == ORDERS
                    && (mode.equals("before-publish") || !lines(out, "published ").isEmpty()));
        } finally {
            child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);   // SIGKILL: no shutdown hook, no finally
        }
        assertThat(outbox.status().backlog()).as("committed rows left unmarked").isEqualTo(ORDERS);

        // When a relay starts after it, and a consumer downstream keyed on the outbox id
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                     kafka.bootstrapServers())).build();
             OutboxRelay relay = outbox.relay(publisher).build().start();
             IdemKafkaConsumer<String> downstream = IdemKafkaConsumer.builder(Map.of(
                             ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                             ConsumerConfig.GROUP_ID_CONFIG, names.group("shipping"),
                             ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                     ledger.<String>processor((delivery, tx) -> {
                         try (PreparedStatement insert = tx.prepareStatement("insert into " + applied + " values (?)")) {
                             insert.setString(1, delivery.payload());
                             insert.executeUpdate();
                         }
                     }).claims(Guards.ON.claims(redisson, names.keyPrefix() + "down")).codec(PayloadCodec.utf8())
                             .keys(KeySource.outboxId()))
                     .topics(shipments).build()) {
            downstream.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> outbox.status().backlog() == 0
                    && count(postgres, "select count(distinct order_id) from " + applied) == ORDERS);
            Thread.sleep(1_000);   // a copy still on its way would show now
        }

        // Then every order's shipment went out, with one id, and was applied once downstream
        List<TopicMessage> sent = kafka.read(shipments);
        Set<String> ids = new HashSet<>();
        sent.forEach(m -> ids.add(m.header(OutboxHeaders.MESSAGE_ID)));
        assertThat(ids).hasSize(ORDERS);
        assertThat(count(postgres, "select count(*) from " + applied)).isEqualTo(ORDERS);
        return sent;
    }

    private static Process child(KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names,
                                 String orders, String shipments, String table, Path out, String mode)
            throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), ChildOutboxMain.class.getName(),
                kafka.bootstrapServers(), names.group(), orders, shipments, redis.uri().toString(), names.keyPrefix(),
                out.toString(), mode, postgres.jdbcUrl(), postgres.user(), postgres.password(), table));
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(Path.of(out + ".process.log").toFile()).start();
    }

    private static void produce(KafkaBroker kafka, String topic, TestNames names) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < ORDERS; i++) {
                byte[] order = (names.topic() + ":" + i).getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, order, order));
            }
        }
    }

    private static List<String> lines(Path file, String prefix) throws IOException {
        return Files.readAllLines(file).stream().filter(line -> line.startsWith(prefix)).toList();
    }

    private static long count(PostgresDatabase postgres, String sql) throws Exception {
        try (Connection connection = postgres.connect();
             ResultSet rows = connection.createStatement().executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
