package dev.idem.micronaut;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.micronaut.app.Effects;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import io.micronaut.context.ApplicationContext;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.api.common.AttributeKey;
import io.micronaut.health.HealthStatus;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The test application ({@code dev.idem.micronaut.app}) on the test kit's Kafka and RocketMQ,
 * Redis and PostgreSQL: duplicates are applied once, a poison message is dead-lettered with one
 * compensation, a failed transactional handler leaves neither its effect nor Idem's ledger row,
 * and shutdown leaves nothing uncommitted.
 */
@IdemTestKit
class MicronautListenersIT {

    private static final Logger LOG = LoggerFactory.getLogger(MicronautListenersIT.class);
    private static final int IDS = 30;
    private static final int COPIES = 3;

    @Test
    void listenersApplyEachOrderOnceDeadLetterPoisonAndCloseCleanly(KafkaBroker kafka, RocketMqBroker rocketMq,
                                                                     RedisEndpoint redis, PostgresDatabase db,
                                                                     TestNames names) throws Exception {
        String kafkaTopic = names.topic("k");
        String rocketTopic = names.topic("r");
        String kafkaGroup = names.group("k");
        String rocketGroup = names.group("r");
        String table = "mn_effect_" + Long.toString(System.nanoTime(), 36);
        String ledgerTable = "mn_ledger_" + Long.toString(System.nanoTime(), 36);
        kafka.createTopic(kafkaTopic, 3);
        kafka.createTopic(kafkaTopic + "-dead", 1);
        rocketMq.createTopic(rocketTopic, 4);
        rocketMq.createTopic(rocketTopic + "_DLQ", 1);
        rocketMq.createRetryTopic(rocketGroup);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("create table " + table + " (broker varchar(16), order_id varchar(64), quantity int)");
        }

        Map<String, Object> properties = new HashMap<>();
        properties.put("test.table", table);
        properties.put("test.kafka.topic", kafkaTopic);
        properties.put("test.kafka.group", kafkaGroup);
        properties.put("test.rocketmq.topic", rocketTopic);
        properties.put("test.rocketmq.group", rocketGroup);
        properties.put("idem.redis.address", redis.uri().toString());
        properties.put("idem.redis.key-prefix", names.keyPrefix());
        properties.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        properties.put("idem.rocketmq.name-server", rocketMq.nameServerAddress());
        properties.put("idem.ledger.table", ledgerTable);
        properties.put("idem.ledger.create-table", true);
        // The Kafka listener's dead letters go to a topic of its own, after retries 100-200 ms apart.
        properties.put("idem.listeners.kafka-orders.dead-letter-topic", kafkaTopic + "-dead");
        properties.put("idem.listeners.kafka-orders.backoff-initial", "100ms");
        properties.put("idem.listeners.kafka-orders.backoff-max", "200ms");
        properties.put("datasources.default.url", db.jdbcUrl());
        properties.put("datasources.default.username", db.user());
        properties.put("datasources.default.password", db.password() == null ? "" : db.password());
        properties.put("datasources.default.driver-class-name", "org.postgresql.Driver");
        properties.put("datasources.default.maximum-pool-size", 8);

        long t0 = System.nanoTime();
        ApplicationContext context = ApplicationContext.run(properties);
        long startup = (System.nanoTime() - t0) / 1_000_000;
        LOG.info("test application started in {} ms", startup);
        Files.writeString(Path.of("target", "micronaut-startup.txt"), "context start with 2 listeners (Kafka, RocketMQ), "
                + "Hikari pool, Redisson: " + startup + " ms\n", StandardCharsets.UTF_8);
        boolean closed = false;
        try {
            Effects effects = context.getBean(Effects.class);
            IdemListeners listeners = context.getBean(IdemListeners.class);
            assertThat(listeners.listeners()).extracting(IdemListeners.RunningListener::name)
                    .containsExactly("kafka-orders", "rocketmq-orders");

            // Each id three times, copies spread over partitions/queues; order-poison always fails,
            // order-flaky fails twice and then applies.
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < IDS; i++) {
                ids.add("order-" + i);
            }
            sendKafka(kafka, kafkaTopic, ids);
            sendRocketMq(rocketMq, rocketTopic, names, ids);

            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                for (String broker : List.of("kafka", "rocketmq")) {
                    assertThat(effects.compensations(broker, "order-poison")).as(broker + " compensation").isEqualTo(1);
                    assertThat(rowsPerId(db, table, broker)).as(broker + " effects").hasSize(IDS + 1);
                }
            });
            // Stragglers (late copies, redeliveries) may still arrive: nothing doubles for 3 s.
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> {
                        for (String broker : List.of("kafka", "rocketmq")) {
                            assertThat(rowsPerId(db, table, broker).values()).as(broker + ": one effect per id")
                                    .containsOnly(1);
                        }
                    });
            for (String broker : List.of("kafka", "rocketmq")) {
                Map<String, Integer> rows = rowsPerId(db, table, broker);
                assertThat(rows.values()).as(broker + ": one effect per id").containsOnly(1);
                assertThat(rows).as(broker + ": the poison's effect was rolled back every time")
                        .doesNotContainKey("order-poison");
                assertThat(rows).containsKey("order-flaky");
                assertThat(effects.calls(broker, "order-flaky")).as(broker + " flaky attempts").isEqualTo(3);
                assertThat(effects.calls(broker, "order-poison")).as(broker + " poison attempts").isEqualTo(3);
                assertThat(effects.compensations(broker, "order-poison")).isEqualTo(1);
                for (String id : ids) {
                    assertThat(effects.calls(broker, id)).as(broker + " handler calls for " + id).isEqualTo(1);
                }
            }
            // The ledger: one applied row per applied id, the poison's row says dead (compensated),
            // none says applied for it: its row rolled back with the effect.
            Map<String, String> ledger = ledger(db, ledgerTable);
            assertThat(ledger.entrySet().stream().filter(e -> e.getValue().equals("applied")).count())
                    .isEqualTo(2L * (IDS + 1));
            assertThat(ledger).containsEntry(kafkaGroup + "/order-poison", "dead-ok")
                    .containsEntry(rocketGroup + "/order-poison", "dead-ok");
            assertThat(deadLetters(kafka, kafkaTopic + "-dead")).containsExactly("order-poison");
            assertThat(rocketMq.read(rocketTopic + "_DLQ")).extracting(TopicMessage::keyText).containsExactly("order-poison");

            // Health: UP while everything runs; a consumer that stopped makes it DOWN.
            IdemHealthIndicator health = context.getBean(IdemHealthIndicator.class);
            assertThat(health.result().getStatus()).isEqualTo(HealthStatus.UP);

            context.close();
            closed = true;
            // Nothing uncommitted: the group's committed offsets are the topic's end offsets.
            assertThat(lag(kafka, kafkaTopic, kafkaGroup)).as("uncommitted Kafka records after close").isZero();
            assertThat(rocketMqLag(rocketMq, rocketTopic, rocketGroup)).as("uncommitted RocketMQ messages after close")
                    .isZero();
            assertThat(rocketMqLag(rocketMq, "%RETRY%" + rocketGroup, rocketGroup))
                    .as("uncommitted RocketMQ redeliveries after close").isZero();
        } finally {
            if (!closed) {
                context.close();
            }
        }
    }

    @Test
    void aListenersRunsAreSpansUnderTheProducersWithTheApplicationsOpenTelemetry(KafkaBroker kafka, RedisEndpoint redis,
                                                                               TestNames names) throws Exception {
        Map<String, Object> properties = healthListener(kafka, redis, names);
        properties.put("test.tracing", true);
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        String producerSpan = "00f067aa0ba902b7";
        try (ApplicationContext context = ApplicationContext.run(properties)) {
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerSettings(kafka))) {
                ProducerRecord<String, String> record = new ProducerRecord<>(
                        String.valueOf(properties.get("test.health.topic")), "traced");
                record.headers().add("traceparent", ("00-" + trace + "-" + producerSpan + "-01").getBytes(StandardCharsets.UTF_8));
                producer.send(record).get();
            }
            InMemorySpanExporter exporter = context.getBean(InMemorySpanExporter.class);
            SpanData run = await().atMost(Duration.ofSeconds(30)).until(() -> exporter.getFinishedSpanItems().stream()
                    .filter(s -> s.getName().startsWith("process ")).toList(), runs -> runs.size() == 1).get(0);
            assertThat(run.getTraceId()).isEqualTo(trace);
            assertThat(run.getParentSpanId()).isEqualTo(producerSpan);
            assertThat(run.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("applied");
            assertThat(exporter.getFinishedSpanItems()).anySatisfy(span -> {
                assertThat(span.getName()).isEqualTo("idem handler");
                assertThat(span.getParentSpanId()).isEqualTo(run.getSpanId());
            });
        }
    }

    @Test
    void aStoppedConsumerMakesHealthDown(KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        Map<String, Object> properties = healthListener(kafka, redis, names);
        try (ApplicationContext context = ApplicationContext.run(properties)) {
            IdemHealthIndicator health = context.getBean(IdemHealthIndicator.class);
            IdemListeners listeners = context.getBean(IdemListeners.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> health.result().getStatus() == HealthStatus.UP);
            listeners.listeners().get(0).closer().close();
            assertThat(health.result().getStatus()).isEqualTo(HealthStatus.DOWN);
            assertThat(health.result().getDetails()).asString().contains("health-orders=STOPPED");
        }
    }

    /**
     * A message that meets infrastructure trouble on every try is deferred, uncounted, and holds its
     * partition: once it has come back for longer than {@code idem.health.stuck-after}, health is
     * DOWN and says which listener is stuck, though its consumer runs.
     */
    @Test
    void aMessageDeferredForLongerThanStuckAfterMakesHealthDown(KafkaBroker kafka, RedisEndpoint redis,
                                                              TestNames names) throws Exception {
        Map<String, Object> properties = healthListener(kafka, redis, names);
        properties.put("idem.health.stuck-after", "5s");
        properties.put("idem.listeners.health-orders.backoff-initial", "200ms");
        properties.put("idem.listeners.health-orders.backoff-max", "400ms");
        try (ApplicationContext context = ApplicationContext.run(properties)) {
            IdemHealthIndicator health = context.getBean(IdemHealthIndicator.class);
            Effects effects = context.getBean(Effects.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> health.result().getStatus() == HealthStatus.UP);
            sendOne(kafka, names.topic(), "unreachable");
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.calls("health", "unreachable") >= 2);
            assertThat(health.result().getStatus()).as("deferred, not yet stuck").isEqualTo(HealthStatus.UP);

            await().atMost(Duration.ofSeconds(30)).until(() -> health.result().getStatus() == HealthStatus.DOWN);
            assertThat(health.result().getDetails()).asString().contains("health-orders=RUNNING",
                    "health-orders.stuck", "idem.health.stuck-after PT5S");
        }
    }

    /**
     * The application stops while a handler runs longer than its listener's close timeout: the
     * consumer's close returns at its bound, and Idem's Redis client must stay open until the record
     * ends, so its completion is recorded (a lost completion lapses into a copy run again in
     * Redis-only mode).
     */
    @Test
    void aHandlerOutlastingTheCloseTimeoutStillRecordsItsCompletion(KafkaBroker kafka, RedisEndpoint redis,
                                                                   TestNames names) throws Exception {
        Map<String, Object> properties = healthListener(kafka, redis, names);
        properties.put("idem.listeners.health-orders.close-timeout", "1s");
        ApplicationContext context = ApplicationContext.run(properties);
        try {
            Effects effects = context.getBean(Effects.class);
            sendOne(kafka, names.topic(), "slow");
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.calls("health", "slow") == 1);
        } finally {
            context.close();   // returns after the one-second close timeout; the handler sleeps on
        }

        ClaimsAfterStop.awaitDone(redis, names.keyPrefix(),
                new dev.idem.core.IdempotencyKey(names.group(), names.topic(), names.topic() + "-0@0"),
                Duration.ofSeconds(15));
    }

    /**
     * The oracle can fail: the same traffic applied by a plain consumer without Idem doubles
     * effects, and counting rows per id sees it.
     */
    @Test
    void withoutIdemTheOracleSeesDoubles(KafkaBroker kafka, PostgresDatabase db, TestNames names) throws Exception {
        kafka.createTopic(names.topic(), 3);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < IDS; i++) {
            ids.add("order-" + i);
        }
        sendKafka(kafka, names.topic(), ids);
        String table = "mn_unguarded_" + Long.toString(System.nanoTime(), 36);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("create table " + table + " (broker varchar(16), order_id varchar(64), quantity int)");
        }
        int sent = (IDS + 2) * COPIES;
        int applied = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = plainConsumer(kafka, names.group());
             Connection c = db.connect()) {
            consumer.subscribe(List.of(names.topic()));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (applied < sent && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    String id = new String(record.key(), StandardCharsets.UTF_8);
                    try (var insert = c.prepareStatement("insert into " + table + " values ('kafka', ?, 1)")) {
                        insert.setString(1, id);
                        insert.executeUpdate();
                    }
                    applied++;
                }
            }
        }
        Map<String, Integer> rows = rowsPerId(db, table, "kafka");
        LOG.info("unguarded: {} copies sent, {} effects for {} ids", sent, rows.values().stream().mapToInt(i -> i).sum(),
                rows.size());
        assertThat(rows).hasSize(IDS + 2);
        assertThat(rows.values()).containsOnly(COPIES);
    }

    // ---- traffic and oracles


    /** The settings of the Redis-only {@code health-orders} listener on a topic of one partition, created. */
    private static Map<String, Object> healthListener(KafkaBroker kafka, RedisEndpoint redis, TestNames names) {
        kafka.createTopic(names.topic(), 1);
        Map<String, Object> properties = new HashMap<>();
        properties.put("test.health.topic", names.topic());
        properties.put("test.health.group", names.group());
        properties.put("idem.redis.address", redis.uri().toString());
        properties.put("idem.redis.key-prefix", names.keyPrefix());
        properties.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        return properties;
    }

    /** One record on partition 0 of {@code topic}. */
    private static Properties producerSettings(KafkaBroker kafka) {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p;
    }

    private static void sendOne(KafkaBroker kafka, String topic, String body) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerSettings(kafka))) {
            producer.send(new ProducerRecord<>(topic, 0, "k", body)).get();
        }
    }
    private static void sendKafka(KafkaBroker kafka, String topic, List<String> ids) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        List<String[]> messages = messages(ids);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            int n = 0;
            for (String[] m : messages) {
                producer.send(new ProducerRecord<>(topic, n++ % 3, m[0], m[1])).get();
            }
        }
    }

    private static void sendRocketMq(RocketMqBroker rocketMq, String topic, TestNames names, List<String> ids)
            throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            int n = 0;
            for (String[] m : messages(ids)) {
                Message message = new Message(topic, "*", m[0], m[1].getBytes(StandardCharsets.UTF_8));
                int queue = n++;
                producer.send(message, (queues, msg, arg) -> queues.get(queue % queues.size()), null);
            }
        } finally {
            producer.shutdown();
        }
    }

    /** Every id, order-flaky and order-poison, {@link #COPIES} times, copies interleaved. */
    private static List<String[]> messages(List<String> ids) {
        List<String> all = new ArrayList<>(ids);
        all.add("order-flaky");
        all.add("order-poison");
        List<String[]> messages = new ArrayList<>();
        for (int copy = 0; copy < COPIES; copy++) {
            List<String> round = new ArrayList<>(all);
            Collections.shuffle(round);
            for (String id : round) {
                int failures = id.equals("order-poison") ? -1 : id.equals("order-flaky") ? 2 : 0;
                messages.add(new String[] {id, "{\"id\":\"" + id + "\",\"quantity\":1,\"failures\":" + failures + "}"});
            }
        }
        return messages;
    }

    static Map<String, Integer> rowsPerId(PostgresDatabase db, String table, String broker) throws SQLException {
        Map<String, Integer> rows = new HashMap<>();
        try (Connection c = db.connect();
             var select = c.prepareStatement("select order_id, count(*) from " + table + " where broker = ? group by order_id")) {
            select.setString(1, broker);
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    rows.put(rs.getString(1), rs.getInt(2));
                }
            }
        }
        return rows;
    }

    private static Map<String, String> ledger(PostgresDatabase db, String table) throws SQLException {
        Map<String, String> rows = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select consumer_group, idempotency_key, outcome from " + table)) {
            while (rs.next()) {
                rows.put(rs.getString(1) + "/" + rs.getString(2), rs.getString(3));
            }
        }
        return rows;
    }

    private static KafkaConsumer<byte[], byte[]> plainConsumer(KafkaBroker kafka, String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("group.id", group);
        p.put("auto.offset.reset", "earliest");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    private static List<String> deadLetters(KafkaBroker kafka, String topic) {
        List<String> keys = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = plainConsumer(kafka, "dlt-reader-" + System.nanoTime())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    keys.add(new String(record.key(), StandardCharsets.UTF_8));
                }
            }
        }
        return keys;
    }

    /**
     * Messages of a topic the group has not committed: each queue's end offset less the offset the
     * broker keeps for the group (what the console calls the group's diff).
     */
    @SuppressWarnings("deprecation")
    private static long rocketMqLag(RocketMqBroker rocketMq, String topic, String group) throws Exception {
        DefaultMQPullConsumer reader = new DefaultMQPullConsumer(group);
        reader.setNamesrvAddr(rocketMq.nameServerAddress());
        reader.setInstanceName("lag-reader-" + System.nanoTime());
        reader.start();
        try {
            long lag = 0;
            long messages = 0;
            for (MessageQueue queue : reader.fetchSubscribeMessageQueues(topic)) {
                long end = reader.maxOffset(queue);
                messages += end;
                lag += end - Math.max(0, reader.fetchConsumeOffset(queue, true));
            }
            assertThat(messages).as("messages on " + topic).isPositive();
            return lag;
        } finally {
            reader.shutdown();
        }
    }

    private static long lag(KafkaBroker kafka, String topic, String group) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            Set<TopicPartition> partitions = Set.of(0, 1, 2).stream().map(p -> new TopicPartition(topic, p))
                    .collect(Collectors.toSet());
            Map<TopicPartition, OffsetSpec> latest = partitions.stream()
                    .collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()));
            long lag = 0;
            for (var e : admin.listOffsets(latest).all().get().entrySet()) {
                OffsetAndMetadata c = committed.get(e.getKey());
                lag += e.getValue().offset() - (c == null ? 0 : c.offset());
            }
            return lag;
        }
    }
}
