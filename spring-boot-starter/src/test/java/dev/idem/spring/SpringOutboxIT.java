package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.listener.OutboxRuntime;
import dev.idem.spring.outbox.OrderDesk;
import dev.idem.spring.outbox.OutboxApp;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@code idem.outbox.enabled=true} in a Spring Boot application, on real Kafka, Redis and PostgreSQL:
 * an {@code @IdempotentListener} sends through the injected {@code Outbox} in its transaction (each
 * order sent three times yields one message, with the id its re-runs share; the runs that failed sent
 * nothing), a {@code @Transactional} service sends with no incoming message (a rolled-back call sends
 * nothing), a send outside a transaction, in another database's or after the commit is refused, and
 * the health reports the relay.
 */
@IdemTestKit
class SpringOutboxIT {

    private static final int IDS = 20;

    @Test
    void theListenerAndAServiceSendThroughTheOutboxInSpringsTransactions(KafkaBroker kafka, RedisEndpoint redis,
                                                                          PostgresDatabase db, TestNames names)
            throws Exception {
        String topic = names.topic();
        String reserved = names.topic("reserved");
        String placed = names.topic("placed");
        kafka.createTopic(topic, 3);
        kafka.createTopic(reserved, 3);
        kafka.createTopic(placed, 1);
        String table = Fixtures.effectTable(db, names, "spring_outbox");
        String run = Integer.toHexString(names.keyPrefix().hashCode() & 0x7fffffff);   // order ids fit the table
        Map<String, Object> props = new HashMap<>();
        props.put("idem.redis.url", redis.uri().toString());
        props.put("idem.redis.key-prefix", names.keyPrefix());
        props.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        props.put("idem.ledger.table", table + "_ledger");
        props.put("idem.ledger.create-table", "true");
        props.put("idem.listeners.stock.backoff-initial", "100ms");
        props.put("idem.listeners.stock.backoff-max", "200ms");
        props.put("idem.outbox.enabled", "true");
        props.put("idem.outbox.broker", "kafka");
        props.put("idem.outbox.table", table + "_outbox");
        props.put("idem.outbox.create-table", "true");
        props.put("spring.datasource.url", db.jdbcUrl());
        props.put("spring.datasource.username", db.user());
        props.put("spring.datasource.password", db.password());
        props.put("test.topic", topic);
        props.put("test.group", names.group());
        props.put("test.table", table);
        props.put("test.reserved", reserved);
        props.put("test.placed", placed);

        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(OutboxApp.class)
                .web(WebApplicationType.NONE).properties(props).run()) {
            try (KafkaProducer<String, String> producer = Fixtures.producer(kafka)) {
                for (int copy = 0; copy < 3; copy++) {
                    for (int i = 0; i < IDS; i++) {
                        String id = run + "-order-" + i;
                        producer.send(new ProducerRecord<>(topic, (i + copy) % 3, id,
                                "{\"id\":\"" + id + "\",\"kind\":\"" + (i == 0 ? "flaky" : "ok") + "\"}")).get();
                    }
                }
            }
            OrderDesk desk = app.getBean(OrderDesk.class);
            String placedId = desk.place("a", false);
            assertThatThrownBy(() -> desk.place("b", true)).hasMessageContaining("refused");
            assertThatThrownBy(() -> desk.sendWithoutTransaction("c")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Outbox.send needs a transaction");
            // In a transaction of another database, the row would commit on its own: refused.
            Outbox outbox = app.getBean(Outbox.class);
            DriverManagerDataSource otherDatabase = new DriverManagerDataSource(db.jdbcUrl(), db.user(), db.password());
            assertThatThrownBy(() -> new TransactionTemplate(new DataSourceTransactionManager(otherDatabase))
                    .executeWithoutResult(status -> outbox.send(OutboxMessage.to(placed).key("d").value("d"))))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("not on the ledger's DataSource");
            // After the commit (an afterCommit callback, as an event listener AFTER_COMMIT runs), refused too.
            List<Throwable> afterCommit = new ArrayList<>();
            new TransactionTemplate(app.getBean(PlatformTransactionManager.class)).executeWithoutResult(status ->
                    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                        @Override
                        public void afterCommit() {
                            try {
                                outbox.send(OutboxMessage.to(placed).key("e").value("e"));
                            } catch (RuntimeException e) {
                                afterCommit.add(e);
                            }
                        }
                    }));
            assertThat(afterCommit).singleElement().asString().contains("committing or rolling back");

            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                    assertThat(kafka.read(reserved)).hasSize(IDS));
            // A late copy or a second publication would show within a few passes of the relay.
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> assertThat(kafka.read(reserved)).hasSize(IDS));

            List<TopicMessage> messages = kafka.read(reserved);
            assertThat(messages).extracting(TopicMessage::keyText).doesNotHaveDuplicates()
                    .allMatch(key -> Objects.requireNonNull(key).startsWith(run + "-order-"));
            assertThat(messages).extracting(m -> m.header(OutboxHeaders.MESSAGE_ID)).doesNotContainNull()
                    .doesNotHaveDuplicates();
            // Downstream, keyed on the outbox id (keySource = OUTBOX_ID): each message applied once.
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(Fixtures.rows(db, table).keySet()
                    .stream().filter(id -> id.startsWith("ship:"))).hasSize(IDS));
            Map<String, Integer> rows = Fixtures.rows(db, table);
            rows.keySet().removeIf(id -> id.startsWith("ship:") && rows.get(id) == 1);
            assertThat(rows).as("one effect per order, the flaky one's failed runs rolled back, one shipment each")
                    .hasSize(IDS + 1).containsEntry(run + "-order-0", 1).containsEntry("desk:a", 1)
                    .doesNotContainKey("desk:b");

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(kafka.read(placed)).hasSize(1));
            TopicMessage event = kafka.read(placed).get(0);
            assertThat(event.keyText()).isEqualTo("a");
            assertThat(event.header(OutboxHeaders.MESSAGE_ID)).isEqualTo(placedId);

            // The relay reads the table's status for the health at most every 10 s.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                Health health = app.getBean(IdemHealthIndicator.class).health();
                assertThat(health.getStatus()).isEqualTo(Status.UP);
                assertThat(String.valueOf(health.getDetails().get("outbox"))).startsWith("UP: 0 unsent");
            });
            assertThat(app.getBean(OutboxRuntime.class).relay()).hasValueSatisfying(relay ->
                    assertThat(relay.published()).isEqualTo(IDS + 1));
        }
    }
}
