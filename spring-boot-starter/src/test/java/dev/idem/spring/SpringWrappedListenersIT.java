package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetterHeaders;
import dev.idem.spring.wrapped.WrappedApp;
import dev.idem.spring.wrapped.WrappedOrders;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Existing spring-kafka {@code @KafkaListener}s, a record listener and a batch listener, and a
 * rocketmq-spring {@code @RocketMQMessageListener}, with Idem put around them by {@code @Idempotent},
 * in two instances of the application on one group, configured by {@code spring.kafka.*} and
 * {@code rocketmq.*} alone: every order sent three times is applied once, a poison order is
 * dead-lettered once and compensated once (its effect rolled back each time), a record the container
 * could not deserialize is dead-lettered with its bytes and the reason without reaching the listener,
 * and the batch listener sees one record at a time. A manual ack mode, auto-commit, a Kafka
 * transaction manager on the container or a listener error handler that swallows failures is refused
 * at start-up, naming the setting.
 */
@IdemTestKit
class SpringWrappedListenersIT {

    private static final int IDS = 10;

    @Test
    void wrappedRecordBatchAndRocketMqListenersApplyEveryOrderOnce(KafkaBroker kafka, RocketMqBroker rocketMq,
                                                                   RedisEndpoint redis, PostgresDatabase db,
                                                                   TestNames names) throws Exception {
        String records = names.topic() + "-r";
        String batch = names.topic() + "-b";
        kafka.createTopic(records, 3);
        kafka.createTopic(batch, 3);
        String table = Fixtures.effectTable(db, names, "wrapped");
        Map<String, Object> props = properties(redis, db, names, table, records, batch);
        props.put("spring.kafka.bootstrap-servers", kafka.bootstrapServers());
        String rocketTopic = names.topic("rocket");
        String rocketGroup = names.group("rocket");
        rocketMq.createTopic(rocketTopic, 4);
        rocketMq.createTopic(rocketTopic + "_DLQ", 1);
        rocketMq.createRetryTopic(rocketGroup);
        props.put("rocketmq.name-server", rocketMq.nameServerAddress());
        props.put("test.rocketmq.topic", rocketTopic);
        props.put("test.rocketmq.group", rocketGroup);
        props.put("idem.listeners.wrapped-rocket.backoff-initial", "100ms");
        props.put("idem.listeners.wrapped-rocket.backoff-max", "200ms");

        try (ConfigurableApplicationContext a = start(props); ConfigurableApplicationContext b = start(props);
             KafkaProducer<String, String> producer = Fixtures.producer(kafka)) {
            for (int copy = 0; copy < 3; copy++) {
                for (int i = 0; i < IDS; i++) {
                    String id = "order-" + i;
                    producer.send(new ProducerRecord<>(records, (copy + i) % 3, id, "ok")).get();
                    producer.send(new ProducerRecord<>(batch, (copy + i) % 3, id, "ok")).get();
                }
                producer.send(new ProducerRecord<>(records, copy, "order-poison", "poison")).get();
            }
            producer.send(new ProducerRecord<>(records, 1, "order-bad", "undecodable")).get();
            producer.send(new ProducerRecord<>(batch, 2, "order-poison", "poison")).get();
            List<String> rocketIds = new java.util.ArrayList<>();
            for (int i = 0; i < IDS; i++) {
                rocketIds.add("order-" + i);
            }
            rocketIds.add("order-poison");
            Fixtures.sendRocketMq(rocketMq, rocketTopic, names, rocketIds, 3, id -> id);

            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                assertThat(count(WrappedOrders.compensations(), "records:order-poison")).isEqualTo(1);
                assertThat(count(WrappedOrders.compensations(), "records:order-bad")).isEqualTo(1);
                assertThat(count(WrappedOrders.compensations(), "batch:order-poison")).isEqualTo(1);
                assertThat(count(WrappedOrders.compensations(), "rocket:order-poison")).isEqualTo(1);
                assertThat(Fixtures.rows(db, table)).hasSize(3 * IDS);
            });
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> assertThat(Fixtures.rows(db, table).values()).containsOnly(1));

            Map<String, Integer> calls = WrappedOrders.calls();
            for (int i = 0; i < IDS; i++) {
                assertThat(calls.get("records:order-" + i)).as("record listener calls for order-" + i).isEqualTo(1);
                assertThat(calls.get("batch:order-" + i)).as("batch listener calls for order-" + i).isEqualTo(1);
                assertThat(calls.get("rocket:order-" + i)).as("RocketMQ listener calls for order-" + i).isEqualTo(1);
            }
            assertThat(calls.get("rocket:order-poison")).as("poison attempts, RocketMQ listener").isEqualTo(5);
            assertThat(rocketMq.read(rocketTopic + "_DLQ")).extracting(TopicMessage::keyText)
                    .containsExactly("order-poison");
            assertThat(calls.get("records:order-poison")).as("poison attempts, record listener").isEqualTo(5);
            assertThat(calls.get("batch:order-poison")).as("poison attempts, batch listener").isEqualTo(3);
            assertThat(calls).as("the undecodable record never reached the listener").doesNotContainKey("records:order-bad");
            assertThat(WrappedOrders.largestBatch()).as("the batch listener is called with one record at a time")
                    .isEqualTo(1);

            Map<String, TopicMessage> letters = deadLetters(kafka, records + ".DLT");
            assertThat(letters).containsOnlyKeys("order-poison", "order-bad");
            TopicMessage bad = letters.get("order-bad");
            assertThat(bad.text()).as("the undecodable record's own bytes").isEqualTo("undecodable");
            assertThat(bad.header(DeadLetterHeaders.REASON)).contains("could not be deserialized", "not an order");
            assertThat(deadLetters(kafka, batch + ".DLT")).containsOnlyKeys("order-poison");
        }
    }

    @Test
    void settingsThatWouldCommitBehindIdemsBackAreRefusedNamingThem(RedisEndpoint redis, PostgresDatabase db,
                                                                     TestNames names) {
        Map<String, List<String>> cases = Map.of(
                "spring.kafka.listener.ack-mode=manual", List.of("ack mode is MANUAL", "spring.kafka.listener.ack-mode"),
                "spring.kafka.consumer.enable-auto-commit=true",
                List.of("enable.auto.commit=true", "spring.kafka.consumer.enable-auto-commit"),
                "spring.kafka.producer.transaction-id-prefix=tx-",
                List.of("transaction manager", "spring.kafka.producer.transaction-id-prefix"),
                "test.swallowing-listener=true", List.of("errorHandler = \"swallow\"", "remove it"));
        cases.forEach((setting, expected) -> {
            Map<String, Object> props = properties(redis, db, names, "never_written", "never-r", "never-b");
            props.put("spring.kafka.bootstrap-servers", "127.0.0.1:1");
            props.put(setting.substring(0, setting.indexOf('=')), setting.substring(setting.indexOf('=') + 1));
            Throwable thrown = catchThrowable(() -> start(props).close());
            StringBuilder messages = new StringBuilder();
            for (Throwable t = thrown; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).as(setting).contains(expected);
        });
    }

    private static Map<String, Object> properties(RedisEndpoint redis, PostgresDatabase db, TestNames names,
                                                  String table, String records, String batch) {
        Map<String, Object> props = new HashMap<>();
        props.put("idem.redis.url", redis.uri().toString());
        props.put("idem.redis.key-prefix", names.keyPrefix());
        props.put("idem.ledger.table", table + "_ledger");
        props.put("idem.ledger.create-table", "true");
        for (String listener : List.of("wrapped-records", "wrapped-batch")) {
            props.put("idem.listeners." + listener + ".backoff-initial", "100ms");
            props.put("idem.listeners." + listener + ".backoff-max", "200ms");
        }
        props.put("spring.kafka.consumer.auto-offset-reset", "earliest");
        props.put("spring.kafka.consumer.value-deserializer",
                "org.springframework.kafka.support.serializer.ErrorHandlingDeserializer");
        props.put("spring.kafka.consumer.properties.spring.deserializer.value.delegate.class",
                "dev.idem.spring.wrapped.StrictDeserializer");
        props.put("spring.datasource.url", db.jdbcUrl());
        props.put("spring.datasource.username", db.user());
        props.put("spring.datasource.password", db.password());
        props.put("test.records-topic", records);
        props.put("test.batch-topic", batch);
        props.put("test.group", names.group());
        props.put("test.table", table);
        return props;
    }

    private static ConfigurableApplicationContext start(Map<String, Object> props) {
        return new SpringApplicationBuilder(WrappedApp.class).web(WebApplicationType.NONE).properties(props).run();
    }

    private static int count(Map<String, AtomicInteger> counts, String id) {
        AtomicInteger n = counts.get(id);
        return n == null ? 0 : n.get();
    }

    private static Map<String, TopicMessage> deadLetters(KafkaBroker kafka, String topic) {
        List<TopicMessage> read = kafka.read(topic);
        assertThat(read).as("one dead letter per key in " + topic).extracting(TopicMessage::keyText)
                .doesNotHaveDuplicates();
        Map<String, TopicMessage> letters = new HashMap<>();
        read.forEach(letter -> letters.put(letter.keyText(), letter));
        return letters;
    }
}
