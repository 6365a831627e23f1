package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.spring.app.Effects;
import dev.idem.spring.app.OrdersApp;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application with an {@code @IdempotentListener} on Kafka and one on RocketMQ, two
 * instances on one consumer group, against real Kafka and RocketMQ brokers, Redis and PostgreSQL:
 * every order sent three times moves stock once;
 * a flaky order is applied once after its retries; a poison order ends as one dead letter and one
 * compensation, and its {@code @Transactional} effect (a JdbcTemplate insert before the throw) is
 * rolled back every time with the ledger row. The handler's {@code JdbcTemplate} sees its own ledger row
 * before it is committed: the method and the row are one transaction.
 */
@IdemTestKit
class SpringListenersIT {

    private static final int IDS = 30;

    @Test
    void twoInstancesApplyEveryOrderOnceAndThePoisonEndsAsOneDeadLetter(KafkaBroker kafka, RocketMqBroker rocketMq,
                                                                        RedisEndpoint redis, PostgresDatabase db,
                                                                        TestNames names) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 3);
        String rocketTopic = names.topic("r");
        String rocketGroup = names.group("r");
        rocketMq.createTopic(rocketTopic, 4);
        rocketMq.createTopic(rocketTopic + "_DLQ", 1);
        rocketMq.createRetryTopic(rocketGroup);
        String table = Fixtures.effectTable(db, names, "spring");
        Map<String, Object> props = new HashMap<>();
        props.put("idem.redis.url", redis.uri().toString());
        props.put("idem.redis.key-prefix", names.keyPrefix());
        props.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        props.put("idem.ledger.table", table + "_ledger");
        props.put("idem.ledger.create-table", "true");
        props.put("idem.listeners.orders.backoff-initial", "100ms");
        props.put("idem.listeners.orders.backoff-max", "200ms");
        props.put("idem.rocketmq.name-server", rocketMq.nameServerAddress());
        props.put("test.rocketmq.topic", rocketTopic);
        props.put("test.rocketmq.group", rocketGroup);
        props.put("spring.datasource.url", db.jdbcUrl());
        props.put("spring.datasource.username", db.user());
        props.put("spring.datasource.password", db.password());
        props.put("test.topic", topic);
        props.put("test.group", names.group());
        props.put("test.table", table);

        try (ConfigurableApplicationContext a = start(props); ConfigurableApplicationContext b = start(props)) {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < IDS; i++) {
                ids.add("order-" + i);
            }
            List<String> rocketIds = new ArrayList<>(ids);
            rocketIds.add("order-poison");
            Fixtures.sendRocketMq(rocketMq, rocketTopic, names, rocketIds, 3, id -> "{\"id\":\"" + id
                    + "\",\"kind\":\"" + (id.equals("order-poison") ? "poison" : "ok") + "\"}");
            try (KafkaProducer<String, String> producer = Fixtures.producer(kafka)) {
                for (int copy = 0; copy < 3; copy++) {
                    for (String id : ids) {
                        send(producer, topic, (copy + id.hashCode()) & 0x7fffffff, id, "ok");
                    }
                    send(producer, topic, copy, "order-flaky", "flaky");
                    send(producer, topic, copy, "order-poison", "poison");
                }
            }

            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                assertThat(Effects.compensations("order-poison")).isEqualTo(1);
                assertThat(Effects.compensations("rocket:order-poison")).isEqualTo(1);
                assertThat(Fixtures.rows(db, table)).hasSize(2 * IDS + 1);
            });
            // Late copies and redeliveries may still arrive: nothing doubles for 3 s.
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> assertThat(Fixtures.rows(db, table).values()).containsOnly(1));

            Map<String, Integer> rows = Fixtures.rows(db, table);
            assertThat(rows).as("the poison's effect was rolled back with its ledger row, every time")
                    .doesNotContainKey("order-poison");
            assertThat(rows).containsKey("order-flaky");
            assertThat(Effects.calls("order-flaky")).as("flaky attempts").isEqualTo(3);
            assertThat(Effects.calls("order-poison")).as("poison attempts").isEqualTo(5);
            for (String id : ids) {
                assertThat(Effects.calls(id)).as("handler calls for " + id).isEqualTo(1);
                assertThat(Effects.calls("rocket:" + id)).as("RocketMQ handler calls for " + id).isEqualTo(1);
            }
            assertThat(rows).as("RocketMQ: the poison's effect rolled back").doesNotContainKey("rocket:order-poison");
            assertThat(Effects.calls("rocket:order-poison")).as("RocketMQ poison attempts").isEqualTo(5);
            assertThat(rocketMq.read(rocketTopic + "_DLQ")).extracting(TopicMessage::keyText).containsExactly("order-poison");
            assertThat(kafka.read(topic + ".DLT")).extracting(TopicMessage::keyText).containsExactly("order-poison");
            Map<String, Boolean> sawLedgerRow = new HashMap<>(Effects.sawLedgerRow());
            sawLedgerRow.keySet().removeIf(id -> !id.startsWith("order-"));   // other tests' orders in this JVM
            assertThat(sawLedgerRow).as("the handler's JdbcTemplate ran in the ledger row's transaction")
                    .hasSize(IDS + 2).doesNotContainValue(false);
            for (ConfigurableApplicationContext context : List.of(a, b)) {
                assertThat(context.getBean(IdemHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
            }
        }
    }

    private static ConfigurableApplicationContext start(Map<String, Object> props) {
        return new SpringApplicationBuilder(OrdersApp.class).web(WebApplicationType.NONE).properties(props).run();
    }


    private static void send(KafkaProducer<String, String> producer, String topic, int spread, String id, String kind)
            throws Exception {
        producer.send(new ProducerRecord<>(topic, spread % 3, id,
                "{\"id\":\"" + id + "\",\"kind\":\"" + kind + "\"}")).get();
    }
}
