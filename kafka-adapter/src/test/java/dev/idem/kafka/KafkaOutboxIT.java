package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Delivery;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.jdbc.ThreadConnections;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRecord;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.redis.Guards;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The outbox between two Idem consumers on a real broker: orders in, shipments out through the
 * outbox, shipments applied downstream. A run that fails after sending leaves no message behind, a
 * relay that dies after publishing publishes again with the same ids, and the downstream consumer
 * keyed on the outbox id applies each shipment once.
 */
@IdemTestKit
class KafkaOutboxIT {

    private static final int ORDERS = 200;
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
    void ordersToShipmentsThroughTheOutboxApplyEachShipmentOnce(KafkaBroker kafka, PostgresDatabase postgres,
                                                                TestNames names) throws Exception {
        Chain chain = chain(kafka, postgres, names, KeySource.outboxId());

        assertThat(chain.applied).as("shipments applied").isEqualTo(ORDERS);
        Set<String> ids = new HashSet<>();
        chain.sent.forEach(m -> ids.add(m.header(OutboxHeaders.MESSAGE_ID)));
        assertThat(ids).as("distinct outbox ids").hasSize(ORDERS);
        assertThat(chain.sent.size()).as("messages on the topic, copies included").isGreaterThan(ORDERS);
        assertThat(chain.sent).noneMatch(m -> m.text() != null && m.text().startsWith("ghost"));
        assertThat(chain.sent).allMatch(m -> "ShipmentRequested".equals(m.header("type")));
    }

    /** The oracle can fail: keyed on the broker's message id, the relay's copies are applied again. */
    @Test
    void keyedOnTheBrokersMessageIdTheRelaysCopiesApplyTwice(KafkaBroker kafka, PostgresDatabase postgres,
                                                             TestNames names) throws Exception {
        Chain chain = chain(kafka, postgres, names, KeySource.messageId());

        assertThat(chain.applied).as("shipments applied").isGreaterThan(ORDERS);
    }

    private record Chain(long applied, List<TopicMessage> sent) {
    }

    private Chain chain(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, KeySource<String> downstreamKeys)
            throws Exception {
        String shipments = names.topic() + "-shipments";
        kafka.createTopic(shipments, 3);
        ThreadConnections connections = new ThreadConnections(postgres.jdbcUrl(), postgres.user(), postgres.password());
        String shipmentTable = "shipment_" + Math.abs(names.group().hashCode());
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
            connection.createStatement().execute("create table " + shipmentTable + " (order_id varchar(255) not null)");
        }
        JdbcOutbox outbox = JdbcOutbox.builder(connections.dataSource()).table("outbox_" + Math.abs(names.group().hashCode()))
                .createTable(true).build();
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(connections.dataSource()).build();
        Map<String, Integer> runs = new ConcurrentHashMap<>();

        // Upstream: a reservation and its shipment request, in one transaction; every fifth order's
        // first run fails after sending, so its message must not leave.
        IdempotentProcessor.Builder<Order> orders = ledger.processor((Delivery<Order> delivery, Connection tx) -> {
            LedgerFixture.<Order>insertMovement().handle(delivery, tx);
            String id = delivery.payload().id();
            int run = runs.merge(id, 1, Integer::sum);
            if (run == 1 && id.hashCode() % 5 == 0) {
                outbox.send(tx, OutboxMessage.to(shipments).key(id).value("ghost of " + id));
                throw new IllegalStateException("the warehouse said no, this time");
            }
            outbox.send(tx, OutboxMessage.to(shipments).key(id).value(id).header("type", "ShipmentRequested"));
        }).claims(Guards.ON.claims(redisson, names.keyPrefix())).codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(Order::id)).backoff(dev.idem.core.Backoff.fixed(Duration.ofMillis(50)));

        // Downstream: one shipment row per message applied, keyed on the outbox id.
        IdempotentProcessor.Builder<String> shipping = ledger.processor((Delivery<String> delivery, Connection tx) -> {
            try (PreparedStatement insert = tx.prepareStatement("insert into " + shipmentTable + " values (?)")) {
                insert.setString(1, delivery.payload());
                insert.executeUpdate();
            }
        }).claims(Guards.ON.claims(redisson, names.keyPrefix() + "down")).codec(PayloadCodec.utf8())
                .keys(downstreamKeys);

        // The relay dies once right after publishing, before marking: its rows go out again.
        AtomicBoolean diedOnce = new AtomicBoolean();
        try (KafkaOutboxPublisher kafkaPublisher = KafkaOutboxPublisher.builder(
                     Map.of("bootstrap.servers", kafka.bootstrapServers())).build();
             KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 3, Guards.ON)) {
            OutboxPublisher publisher = records -> {
                List<OutboxPublisher.Result> results = kafkaPublisher.publish(records);
                if (diedOnce.compareAndSet(false, true)) {
                    throw new IllegalStateException("the relay died after publishing " + records.size());
                }
                return results;
            };
            try (OutboxRelay relay = outbox.relay(publisher).pollInterval(Duration.ofMillis(20))
                         .maxBackoff(Duration.ofMillis(100)).build().start();
                 IdemKafkaConsumer<Order> upstream = IdemKafkaConsumer.builder(config(kafka, names.group("orders")), orders)
                         .topics(scenario.topic).concurrency(2).build();
                 IdemKafkaConsumer<String> downstream = IdemKafkaConsumer.builder(config(kafka, names.group("shipping")),
                         shipping).topics(shipments).concurrency(2).build()) {
                scenario.produce(ORDERS, 3);
                upstream.start();
                downstream.start();

                await().atMost(Duration.ofMinutes(2)).until(() -> rows(postgres, "select count(distinct order_id) from "
                        + shipmentTable) == ORDERS && outbox.status().backlog() == 0);
                Thread.sleep(1_000);   // copies still on their way would show now
            }
            assertThat(diedOnce).isTrue();
            return new Chain(rows(postgres, "select count(*) from " + shipmentTable), kafka.read(shipments));
        }
    }

    @Test
    void aMissingTopicIsPoisonAndTheRestIsPublished(KafkaBroker kafka, TestNames names) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(
                Map.of("bootstrap.servers", kafka.bootstrapServers())).timeout(Duration.ofSeconds(10))
                .missingTopicGrace(Duration.ZERO).build()) {
            List<OutboxPublisher.Result> results = publisher.publish(List.of(
                    record(1, topic + "-nowhere"), record(2, topic)));

            assertThat(results.get(0)).isInstanceOf(OutboxPublisher.Poison.class)
                    .satisfies(r -> assertThat(((OutboxPublisher.Poison) r).reason()).contains("does not exist"));
            assertThat(results.get(1)).isEqualTo(OutboxPublisher.Published.INSTANCE);
        }
        TopicMessage published = kafka.read(topic).get(0);
        assertThat(published.header(OutboxHeaders.MESSAGE_ID)).isEqualTo("id-2");
        assertThat(published.header(OutboxHeaders.TRACE_PARENT))
                .isEqualTo("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        assertThat(published.keyText()).isEqualTo("k");
    }

    private static OutboxRecord record(long position, String topic) {
        return new OutboxRecord(position, "id-" + position, topic, "k", "v".getBytes(StandardCharsets.UTF_8), Map.of(),
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", java.time.Instant.now(), 0);
    }

    private static Map<String, Object> config(KafkaBroker kafka, String group) {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    }

    private static long rows(PostgresDatabase postgres, String sql) throws Exception {
        try (Connection connection = postgres.connect();
             ResultSet rows = connection.createStatement().executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
