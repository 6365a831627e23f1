package dev.idem.micronaut;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.micronaut.app.OutboxStock;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.transaction.TransactionOperations;
import io.micronaut.transaction.support.TransactionSynchronization;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthResult;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * {@code idem.outbox.enabled=true} in a Micronaut application, on real Kafka, Redis and PostgreSQL:
 * the listener sends through the injected {@code Outbox} in its {@code @Transactional} method (each
 * order sent three times yields one message; the failed runs of an order that fails twice sent
 * nothing), a {@code @Transactional} method sends with no incoming message and a rolled-back one sends
 * nothing, a send outside a transaction is refused, and the health reports the relay.
 */
@IdemTestKit
class MicronautOutboxIT {

    private static final int IDS = 20;

    @Test
    void theListenerAndAServiceSendThroughTheOutboxInMicronautsTransactions(KafkaBroker kafka, RedisEndpoint redis,
                                                                              PostgresDatabase db, TestNames names)
            throws Exception {
        String topic = names.topic();
        String reserved = names.topic("reserved");
        kafka.createTopic(topic, 3);
        kafka.createTopic(reserved, 3);
        String table = "mn_outbox_effect_" + Long.toString(System.nanoTime(), 36);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("create table " + table + " (id varchar(80) not null)");
        }
        Map<String, Object> properties = new HashMap<>();
        properties.put("test.outbox.topic", topic);
        properties.put("test.outbox.group", names.group());
        properties.put("test.outbox.table", table);
        properties.put("test.outbox.reserved", reserved);
        properties.put("idem.redis.address", redis.uri().toString());
        properties.put("idem.redis.key-prefix", names.keyPrefix());
        properties.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        properties.put("idem.ledger.table", table + "_ledger");
        properties.put("idem.ledger.create-table", true);
        properties.put("idem.listeners.outbox-stock.backoff-initial", "100ms");
        properties.put("idem.listeners.outbox-stock.backoff-max", "200ms");
        properties.put("idem.outbox.enabled", true);
        properties.put("idem.outbox.broker", "kafka");
        properties.put("idem.outbox.table", table + "_outbox");
        properties.put("idem.outbox.create-table", true);
        properties.put("datasources.default.url", db.jdbcUrl());
        properties.put("datasources.default.username", db.user());
        properties.put("datasources.default.password", db.password() == null ? "" : db.password());
        properties.put("datasources.default.driver-class-name", "org.postgresql.Driver");

        try (ApplicationContext context = ApplicationContext.run(properties)) {
            Properties p = new Properties();
            p.put("bootstrap.servers", kafka.bootstrapServers());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                    new StringSerializer())) {
                for (int copy = 0; copy < 3; copy++) {
                    for (int i = 0; i < IDS; i++) {
                        String id = names.keyPrefix() + "-order-" + i;
                        producer.send(new ProducerRecord<>(topic, (i + copy) % 3, id, "{\"id\":\"" + id
                                + "\",\"quantity\":1,\"failures\":" + (i == 0 ? 2 : 0) + "}")).get();
                    }
                }
            }
            OutboxStock stock = context.getBean(OutboxStock.class);
            String placedId = stock.place("a", false);
            assertThatThrownBy(() -> stock.place("b", true)).hasMessageContaining("refused");
            assertThatThrownBy(() -> stock.sendWithoutTransaction("c")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Outbox.send needs a transaction");
            // After the commit (an afterCommit callback), the row would commit apart from the effect: refused.
            Outbox outbox = context.getBean(Outbox.class);
            @SuppressWarnings("unchecked")
            TransactionOperations<Connection> transactions = context.getBean(
                    Argument.of(TransactionOperations.class, Connection.class));
            List<Throwable> afterCommit = new ArrayList<>();
            transactions.executeWrite(status -> {
                status.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        try {
                            outbox.send(OutboxMessage.to(reserved).key("e").value("e"));
                        } catch (RuntimeException e) {
                            afterCommit.add(e);
                        }
                    }
                });
                return null;
            });
            assertThat(afterCommit).singleElement().asString().contains("Outbox.send needs a transaction");

            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(kafka.read(reserved)).hasSize(IDS + 1));
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> assertThat(kafka.read(reserved)).hasSize(IDS + 1));

            List<TopicMessage> messages = kafka.read(reserved);
            assertThat(messages).extracting(TopicMessage::keyText).doesNotHaveDuplicates().contains("desk:a")
                    .doesNotContain("desk:b", "c", "e");
            assertThat(messages).extracting(m -> m.header(OutboxHeaders.MESSAGE_ID)).doesNotContainNull()
                    .doesNotHaveDuplicates().contains(placedId);
            assertThat(OutboxStock.CALLS.get(names.keyPrefix() + "-order-0")).hasValue(3);
            Map<String, Integer> rows = rows(db, table);
            assertThat(rows).as("one effect per order, the failed runs rolled back").hasSize(IDS + 1)
                    .containsEntry(names.keyPrefix() + "-order-0", 1).containsEntry("desk:a", 1);

            // The relay reads the table's status for the health at most every 10 s.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                HealthResult health = context.getBean(IdemHealthIndicator.class).result();
                assertThat(health.getStatus()).isEqualTo(HealthStatus.UP);
                assertThat(String.valueOf(((Map<?, ?>) health.getDetails()).get("outbox"))).startsWith("UP: 0 unsent");
            });
        }
    }

    private static Map<String, Integer> rows(PostgresDatabase db, String table) throws Exception {
        Map<String, Integer> rows = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select id, count(*) from " + table + " group by id")) {
            while (r.next()) {
                rows.put(r.getString(1), r.getInt(2));
            }
        }
        return rows;
    }
}
