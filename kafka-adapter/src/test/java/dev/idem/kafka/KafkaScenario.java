package dev.idem.kafka;

import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetter;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.IdempotentProcessor;
import dev.idem.redis.Guards;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.jdbc.ThreadConnections;
import dev.idem.core.Backoff;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.redisson.api.RedissonClient;

/**
 * One test's world: a topic on the real broker, Idem consumers with Redis claims and a PostgreSQL
 * ledger, and the effects they leave (stock movement rows), handler calls and compensations.
 */
final class KafkaScenario implements AutoCloseable {

    /** The payload of the test topic. */
    record Order(String id, int quantity) {
    }

    /** What the handler does before applying an effect; throw to fail the attempt. */
    @FunctionalInterface
    interface Behaviour {
        void before(Order order, int invocation) throws Exception;
    }

    final String topic;
    final String group;
    final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    final Map<String, List<Instant>> invocations = new ConcurrentHashMap<>();
    final List<String> appliedOrder = new CopyOnWriteArrayList<>();

    private final KafkaBroker kafka;
    private final RedissonClient redisson;
    private final TestNames names;
    private final Guards guards;
    private final ThreadConnections connections;
    private final PostgresDatabase postgres;
    private final List<IdemKafkaConsumer<Order>> consumers = new ArrayList<>();
    private volatile Behaviour behaviour = (order, invocation) -> { };
    private volatile int maxDelayMillis;
    private volatile Backoff backoff = Backoff.fixed(Duration.ofMillis(100));
    private volatile PayloadCodec<Order> codec = PayloadCodec.json(Order.class);
    private volatile Duration lease = Duration.ofSeconds(30);
    private volatile KeySource<Order> keys = KeySource.payload(Order::id);

    KafkaScenario(KafkaBroker kafka, RedissonClient redisson, PostgresDatabase postgres, TestNames names,
                  int partitions, Guards guards) throws Exception {
        this.kafka = kafka;
        this.redisson = redisson;
        this.postgres = postgres;
        this.names = names;
        this.guards = guards;
        this.topic = names.topic();
        this.group = names.group();
        kafka.createTopic(topic, partitions);
        this.connections = new ThreadConnections(postgres.jdbcUrl(), postgres.user(), postgres.password());
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
    }

    KafkaScenario behaviour(Behaviour behaviour) {
        this.behaviour = behaviour;
        return this;
    }

    KafkaScenario handlerDelay(int maxDelayMillis) {
        this.maxDelayMillis = maxDelayMillis;
        return this;
    }

    KafkaScenario backoff(Duration backoff) {
        this.backoff = Backoff.fixed(backoff);
        return this;
    }

    KafkaScenario backoff(Backoff backoff) {
        this.backoff = backoff;
        return this;
    }

    KafkaScenario codec(PayloadCodec<Order> codec) {
        this.codec = codec;
        return this;
    }

    KafkaScenario keys(KeySource<Order> keys) {
        this.keys = keys;
        return this;
    }

    KafkaScenario lease(Duration lease) {
        this.lease = lease;
        return this;
    }

    String orderId(int i) {
        return topic + ":" + i;
    }

    IdempotentProcessor.Builder<Order> processorBuilder() {
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(connections.dataSource()).build();
        DeliveryHandler<Order> handler = guards.handler(ledger, connections.dataSource(), (delivery, tx) -> {
            invoked(delivery.payload());
            LedgerFixture.<Order>insertMovement().handle(delivery, tx);
            appliedOrder.add(delivery.payload().id());
        });
        return IdempotentProcessor.builder(handler)
                .claims(guards.claims(redisson, names.keyPrefix()))
                .dedupCheck(guards.dedupCheck(ledger))
                .codec(codec)
                .keys(keys)
                .compensation(compensated::add)
                .backoff(backoff)
                .lease(lease)
                .meterRegistry(new SimpleMeterRegistry());
    }

    private void invoked(Order order) throws Exception {
        List<Instant> calls = invocations.computeIfAbsent(order.id(), id -> new CopyOnWriteArrayList<>());
        calls.add(Instant.now());
        behaviour.before(order, calls.size());
        if (maxDelayMillis > 0) {
            TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextInt(maxDelayMillis * 1000));
        }
    }

    Map<String, Object> consumerConfig() {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return config;
    }

    IdemKafkaConsumer<Order> startConsumer(int concurrency) {
        return startConsumer(concurrency, Map.of());
    }

    IdemKafkaConsumer<Order> startConsumer(int concurrency, Map<String, Object> extra) {
        return start(consumerBuilder(concurrency, extra, processorBuilder()));
    }

    /** A consumer builder on this scenario's topic and group, for tests that set more. */
    IdemKafkaConsumer.Builder<Order> consumerBuilder(int concurrency, Map<String, Object> extra,
                                                     IdempotentProcessor.Builder<Order> processor) {
        Map<String, Object> config = consumerConfig();
        config.putAll(extra);
        return IdemKafkaConsumer.builder(config, processor).topics(topic).concurrency(concurrency);
    }

    /** Builds, starts and remembers the consumer, so the scenario closes it. */
    IdemKafkaConsumer<Order> start(IdemKafkaConsumer.Builder<Order> builder) {
        IdemKafkaConsumer<Order> consumer = builder.build();
        consumers.add(consumer);
        consumer.start();
        return consumer;
    }

    /** Sends records as they are (headers, null values), with one request in flight. */
    void produceRecords(List<ProducerRecord<byte[], byte[]>> records) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            records.forEach(producer::send);
            producer.flush();
        }
    }

    /** The group's committed offset of a partition, or -1 when none. */
    long committed(int partition) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                    .get(new TopicPartition(topic, partition));
            return offset == null ? -1 : offset.offset();
        }
    }

    /** How often the handler ran for an order. */
    int calls(String orderId) {
        return invocations.getOrDefault(orderId, List.of()).size();
    }

    /** Sends every order {@code copies} times (as a retrying producer would), keyed by order id. */
    void produce(int orders, int copies) {
        List<byte[]> values = new ArrayList<>();
        for (int copy = 0; copy < copies; copy++) {
            for (int i = 0; i < orders; i++) {
                values.add(json(new Order(orderId(i), 1)));
            }
        }
        produceRaw(values);
    }

    void produceRaw(List<byte[]> values) {
        // Not idempotent: right after topic creation the broker may answer NOT_LEADER_OR_FOLLOWER once,
        // and an idempotent producer can then loop on OutOfOrderSequence until its delivery timeout.
        // One request in flight keeps order; a batch that was refused was not written, so no copies.
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1,
                ProducerConfig.LINGER_MS_CONFIG, 5), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (byte[] value : values) {
                String key = keyOf(value);
                producer.send(new ProducerRecord<>(topic, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                        value));
            }
            producer.flush();
        }
    }

    /** One record per order id, with the id in {@code header} (left out where the id is empty). */
    void produceWithHeader(List<String> ids, String header) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < ids.size(); i++) {
                String id = ids.get(i).isEmpty() ? topic + ":anonymous-" + i : ids.get(i);
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, json(new Order(id, 1)));
                if (!ids.get(i).isEmpty()) {
                    record.headers().add(header, ids.get(i).getBytes(StandardCharsets.UTF_8));
                }
                producer.send(record);
            }
            producer.flush();
        }
    }

    /** One order per value, each with that value (raw bytes) in {@code header}. */
    void produceWithBinaryHeader(List<byte[]> values, String header) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < values.size(); i++) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, json(new Order(orderId(i), 1)));
                record.headers().add(header, values.get(i));
                producer.send(record);
            }
            producer.flush();
        }
    }

    private static String keyOf(byte[] value) {
        String text = new String(value, StandardCharsets.UTF_8);
        int at = text.indexOf("\"id\":\"");
        return at < 0 ? null : text.substring(at + 6, text.indexOf('"', at + 6));
    }

    static byte[] json(Order order) {
        return ("{\"id\":\"" + order.id() + "\",\"quantity\":" + order.quantity() + "}").getBytes(StandardCharsets.UTF_8);
    }

    /** Waits until the group has committed every record of the topic. */
    void awaitDrained(Duration timeout) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(() -> drained(admin));
        }
    }

    private boolean drained(Admin admin) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get();
        Set<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)
                .partitions().stream().map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toSet());
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(
                partitions.stream().collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()))).all().get();
        return partitions.stream().allMatch(p -> committed.get(p) != null
                && committed.get(p).offset() >= ends.get(p).offset());
    }

    /** Stock movements written for this scenario's orders. */
    int effects() throws Exception {
        try (Connection connection = postgres.connect()) {
            return LedgerFixture.movementsWithPrefix(connection, topic + ":");
        }
    }

    /** Stock movements per order of this scenario (orders never applied are absent). */
    Map<String, Integer> effectsPerOrder() throws Exception {
        Map<String, Integer> counts = new HashMap<>();
        try (Connection connection = postgres.connect();
             var select = connection.prepareStatement("select idempotency_key, count(*) from stock_movement "
                     + "where idempotency_key like ? group by idempotency_key")) {
            select.setString(1, topic + ":%");
            try (var rows = select.executeQuery()) {
                while (rows.next()) {
                    counts.put(rows.getString(1), rows.getInt(2));
                }
            }
        }
        return counts;
    }

    /** Every record on a topic: all partitions assigned and read from the beginning to their end offsets. */
    @SuppressWarnings("unchecked")
    List<ConsumerRecord<byte[], byte[]>> readAll(String anyTopic) {
        return kafka.read(anyTopic).stream().map(m -> (ConsumerRecord<byte[], byte[]>) m.source(ConsumerRecord.class))
                .toList();
    }

    @Override
    public void close() throws Exception {
        for (IdemKafkaConsumer<Order> consumer : consumers) {
            consumer.close();
        }
        connections.close();
    }
}
