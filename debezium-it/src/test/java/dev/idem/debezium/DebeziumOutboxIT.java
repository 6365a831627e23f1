package dev.idem.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.KafkaOutboxPublisher;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.LocalLogicalPostgres;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Debezium's embedded engine reads Idem's outbox table from PostgreSQL's write-ahead log
 * ({@code wal_level=logical}) through the Outbox Event Router configured as the guide says, and its
 * records leave through Kafka Connect's converters (string key, byte-array value, simple headers), as
 * a Connect worker would send them. The messages are the relay's: same topics, keys, values and
 * {@code idem-message-id}; nothing of a rolled-back transaction. With Idem's relay publishing the same
 * rows again, a consumer downstream keyed on the outbox id applies each message once.
 */
@IdemTestKit
class DebeziumOutboxIT {

    private static final int MESSAGES = 40;
    private static LocalLogicalPostgres postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = LocalLogicalPostgres.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    /** The connector configuration of the guide's outbox page, for {@code table}. */
    static Properties connector(String table, String slot) {
        Properties p = new Properties();
        p.setProperty("name", "idem-outbox");
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        p.setProperty("offset.flush.interval.ms", "100");
        p.setProperty("database.hostname", "127.0.0.1");
        p.setProperty("database.port", String.valueOf(postgres.port()));
        p.setProperty("database.user", postgres.database().user());
        p.setProperty("database.password", postgres.database().password());
        p.setProperty("database.dbname", "postgres");
        p.setProperty("topic.prefix", "idem");
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", slot);
        p.setProperty("publication.name", slot);
        p.setProperty("publication.autocreate.mode", "filtered");
        p.setProperty("table.include.list", "public." + table);
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("tombstones.on.delete", "false");
        // The Outbox Event Router on Idem's columns: the row's destination is the topic, its key the
        // record's key, its payload the value, its id and traceparent headers.
        p.setProperty("transforms", "outbox");
        p.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
        p.setProperty("transforms.outbox.table.field.event.id", "id");
        p.setProperty("transforms.outbox.table.field.event.key", "message_key");
        p.setProperty("transforms.outbox.table.field.event.payload", "payload");
        p.setProperty("transforms.outbox.route.by.field", "destination");
        p.setProperty("transforms.outbox.route.topic.replacement", "${routedByValue}");
        p.setProperty("transforms.outbox.table.fields.additional.placement",
                "id:header:idem-message-id,traceparent:header:traceparent");
        return p;
    }

    @Test
    void debeziumPublishesTheOutboxAsTheRelayDoesWithTheSameIds(KafkaBroker kafka, RedisEndpoint redis,
                                                               TestNames names) throws Exception {
        String table = "outbox_" + Integer.toHexString(names.group().hashCode());
        String slot = "idem_" + Integer.toHexString(names.group().hashCode());
        String shipments = names.topic("shipments");
        kafka.createTopic(shipments, 2);
        DataSource dataSource = dataSource();
        JdbcOutbox outbox = JdbcOutbox.builder(dataSource).table(table).createTable(true).build();

        // Given Debezium streaming the table's changes into Kafka, as a Connect worker would
        ExecutorService engineThread = Executors.newSingleThreadExecutor();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
                kafka.bootstrapServers(), "acks", "all"), new ByteArraySerializer(), new ByteArraySerializer());
             DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine.create(
                     ChangeEventFormat.of(Connect.class))
                     .using(connector(table, slot))
                     .notifying(event -> forward(producer, event.record()))
                     .build()) {
            engineThread.execute(engine);
            await().atMost(Duration.ofSeconds(60)).until(() -> slotActive(dataSource, slot));

            // When transactions write the outbox, one in four rolled back
            List<String> committed = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                try (Connection tx = dataSource.getConnection()) {
                    tx.setAutoCommit(false);
                    String id = outbox.send(tx, OutboxMessage.to(shipments).key("order-" + i).value("ship " + i)
                            .header("kind", "shipment"));
                    if (i % 4 == 3) {
                        tx.rollback();
                    } else {
                        tx.commit();
                        committed.add(id);
                    }
                }
            }
            int expected = committed.size();
            await().atMost(Duration.ofSeconds(60)).until(() -> kafka.read(shipments).size() == expected);

            // Then Debezium published each committed row once, with its id, key and value
            List<TopicMessage> captured = kafka.read(shipments);
            assertThat(captured).extracting(m -> m.header(OutboxHeaders.MESSAGE_ID))
                    .containsExactlyInAnyOrderElementsOf(committed);
            for (TopicMessage message : captured) {
                String n = message.keyText().substring("order-".length());
                assertThat(message.text()).isEqualTo("ship " + n);
            }
        } finally {
            engineThread.shutdown();
            engineThread.awaitTermination(30, TimeUnit.SECONDS);
        }

        // And Idem's relay, publishing the same rows again, sends the same messages: the same ids,
        // keys and values, so a consumer keyed on the outbox id applies each once.
        List<TopicMessage> byDebezium = kafka.read(shipments);
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                     kafka.bootstrapServers())).build();
             OutboxRelay relay = outbox.relay(publisher).build().start()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.read(shipments).size() == 2 * byDebezium.size());
            assertThat(relay.published()).isEqualTo(byDebezium.size());
        }
        Map<String, List<String>> copies = new HashMap<>();
        for (TopicMessage message : kafka.read(shipments)) {
            copies.computeIfAbsent(message.header(OutboxHeaders.MESSAGE_ID), id -> new ArrayList<>())
                    .add(message.keyText() + "=" + message.text());
        }
        assertThat(copies).as("per id, Debezium's message and the relay's").hasSize(byDebezium.size())
                .allSatisfy((id, both) -> assertThat(both).hasSize(2).containsOnly(both.get(0)));

        long applied = applyDownstream(kafka, redis, names, dataSource, shipments, byDebezium.size());
        assertThat(applied).as("effects downstream of " + 2 * byDebezium.size() + " messages").isEqualTo(
                byDebezium.size());
    }

    /** A consumer downstream on the outbox id, on the ledger; returns its effects once they stop growing. */
    private static long applyDownstream(KafkaBroker kafka, RedisEndpoint redis, TestNames names, DataSource dataSource,
                                        String topic, int distinct) throws Exception {
        String effects = "shipped_" + Integer.toHexString(names.group().hashCode());
        try (Connection connection = dataSource.getConnection()) {
            connection.createStatement().execute("create table " + effects + " (id varchar(64) not null)");
        }
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).createTable(true).build();
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri().toString());
        RedissonClient redisson = Redisson.create(config);
        try (IdemKafkaConsumer<String> shipping = IdemKafkaConsumer.builder(Map.of("bootstrap.servers",
                        kafka.bootstrapServers(), "group.id", names.group("shipping"), "auto.offset.reset", "earliest"),
                ledger.<String>processor((delivery, tx) -> {
                    try (PreparedStatement insert = tx.prepareStatement("insert into " + effects + " values (?)")) {
                        insert.setString(1, delivery.payload());
                        insert.executeUpdate();
                    }
                }).claims(RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build())
                        .codec(PayloadCodec.utf8()).keys(KeySource.outboxId()))
                .topics(topic).build()) {
            shipping.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> count(dataSource, effects) >= distinct);
            // A second effect of a copy would show within a few polls.
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                    .untilAsserted(() -> assertThat(count(dataSource, effects)).isEqualTo(distinct));
            return count(dataSource, effects);
        } finally {
            redisson.shutdown();
        }
    }

    /** Sends a routed record as Kafka Connect would: string key, byte-array value, simple headers. */
    private static void forward(KafkaProducer<byte[], byte[]> producer, SourceRecord record) {
        if (record == null || record.value() == null) {
            return;   // a delete or a tombstone: nothing to publish
        }
        String topic = record.topic();
        RecordHeaders headers = new RecordHeaders();
        SimpleHeaderConverter headerConverter = new SimpleHeaderConverter();
        for (Header header : record.headers()) {
            headers.add(header.key(), headerConverter.fromConnectHeader(topic, header.key(), header.schema(),
                    header.value()));
        }
        byte[] key = KEYS.fromConnectData(topic, record.keySchema(), record.key());
        byte[] value = VALUES.fromConnectData(topic, record.valueSchema(), record.value());
        try {
            producer.send(new ProducerRecord<>(topic, null, key, value, headers)).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not forward a record to " + topic + ": " + e.getMessage(), e);
        }
    }

    private static final StringConverter KEYS = new StringConverter();
    private static final ByteArrayConverter VALUES = new ByteArrayConverter();

    static {
        KEYS.configure(Map.of(), true);
        VALUES.configure(Map.of(), false);
    }

    private static boolean slotActive(DataSource dataSource, String slot) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement select = connection.prepareStatement(
                     "select active from pg_replication_slots where slot_name = ?")) {
            select.setString(1, slot);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next() && rows.getBoolean(1);
            }
        }
    }

    private static long count(DataSource dataSource, String table) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             ResultSet rows = connection.createStatement().executeQuery("select count(*) from " + table)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static DataSource dataSource() {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(postgres.database().jdbcUrl());
        dataSource.setUser(postgres.database().user());
        dataSource.setPassword(postgres.database().password());
        return dataSource;
    }
}
