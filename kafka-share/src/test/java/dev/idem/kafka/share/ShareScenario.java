package dev.idem.kafka.share;

import static org.awaitility.Awaitility.await;

import dev.idem.core.Backoff;
import dev.idem.core.DeadLetter;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.jdbc.ThreadConnections;
import dev.idem.redis.Guards;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One test's world for share groups: a topic, a share group configured to start at the earliest
 * record with a given delivery count limit and the shortest lock Kafka allows, Idem share consumers
 * with Redis claims and a PostgreSQL ledger, and the effects they leave.
 */
final class ShareScenario implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ShareScenario.class);

    /** The payload of the test topic. */
    record Order(String id, int quantity) {
    }

    /** What the handler does before applying an effect; throw to fail the attempt. */
    @FunctionalInterface
    interface Behaviour {
        void before(Order order, int invocation) throws Exception;
    }

    // Kafka's smallest record lock (group.share.min.record.lock.duration.ms): expiries come soonest.
    static final int LOCK_MS = 15_000;

    final String topic;
    final String group;
    final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    final Map<String, List<Instant>> invocations = new ConcurrentHashMap<>();
    // The broker's delivery count each handler run saw.
    final List<Integer> deliveryCounts = new CopyOnWriteArrayList<>();
    final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

    private final KafkaBroker kafka;
    private final TestNames names;
    private final Guards guards;
    private final ThreadConnections connections;
    private final PostgresDatabase postgres;
    private final List<IdemKafkaShareConsumer<Order>> consumers = new ArrayList<>();
    private volatile Behaviour behaviour = (order, invocation) -> { };
    private volatile int maxDelayMillis;
    private volatile Duration lease = Duration.ofSeconds(30);

    ShareScenario(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, int partitions, Guards guards,
                  int deliveryLimit) throws Exception {
        this.kafka = kafka;
        this.postgres = postgres;
        this.names = names;
        this.guards = guards;
        this.topic = names.topic();
        this.group = names.group();
        kafka.createTopic(topic, partitions);
        configureGroup(Map.of("share.auto.offset.reset", "earliest",
                "share.delivery.count.limit", Integer.toString(deliveryLimit),
                "share.record.lock.duration.ms", Integer.toString(LOCK_MS)));
        this.connections = new ThreadConnections(postgres.jdbcUrl(), postgres.user(), postgres.password());
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
    }

    void configureGroup(Map<String, String> settings) throws Exception {
        try (Admin admin = admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            List<AlterConfigOp> ops = settings.entrySet().stream()
                    .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                    .toList();
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(30, TimeUnit.SECONDS);
        }
    }

    ShareScenario behaviour(Behaviour behaviour) {
        this.behaviour = behaviour;
        return this;
    }

    ShareScenario handlerDelay(int maxDelayMillis) {
        this.maxDelayMillis = maxDelayMillis;
        return this;
    }

    ShareScenario lease(Duration lease) {
        this.lease = lease;
        return this;
    }

    String orderId(int i) {
        return topic + ":" + i;
    }

    IdempotentProcessor.Builder<Order> processorBuilder(RedissonClient redisson) {
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(connections.dataSource()).build();
        DeliveryHandler<Order> handler = guards.handler(ledger, connections.dataSource(), (delivery, tx) -> {
            deliveryCounts.add(delivery.envelope().brokerAttempt());
            invoked(delivery.payload());
            LedgerFixture.<Order>insertMovement().handle(delivery, tx);
        });
        return IdempotentProcessor.builder(handler)
                .claims(guards.claims(redisson, names.keyPrefix()))
                .dedupCheck(guards.dedupCheck(ledger))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(Order::id))
                .compensation(compensated::add)
                .backoff(Backoff.fixed(Duration.ofMillis(100)))
                .lease(lease)
                .onOutcome(outcomes::add)
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

    Map<String, Object> config() {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        return config;
    }

    IdemKafkaShareConsumer.Builder<Order> builder(RedissonClient redisson, int concurrency) {
        return IdemKafkaShareConsumer.builder(config(), processorBuilder(redisson)).topics(topic)
                .concurrency(concurrency).closeTimeout(Duration.ofSeconds(10));
    }

    /** Builds, starts and remembers the consumer, so the scenario closes it. */
    IdemKafkaShareConsumer<Order> start(IdemKafkaShareConsumer.Builder<Order> builder) {
        IdemKafkaShareConsumer<Order> consumer = builder.build();
        consumers.add(consumer);
        consumer.start();
        return consumer;
    }

    /** Sends every order {@code copies} times (as a retrying producer would), keyed by order id. */
    void produce(int orders, int copies) {
        List<String> ids = new ArrayList<>();
        for (int copy = 0; copy < copies; copy++) {
            for (int i = 0; i < orders; i++) {
                ids.add(orderId(i));
            }
        }
        produceIds(ids);
    }

    void produceIds(List<String> ids) {
        // Not idempotent, one request in flight: a fresh topic's first refused batch is not written twice.
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1,
                ProducerConfig.LINGER_MS_CONFIG, 5), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (String id : ids) {
                // No record key: copies of one order spread over the partitions, as a share group's
                // members then read them at the same time.
                producer.send(new ProducerRecord<>(topic, json(new Order(id, 1))));
            }
            producer.flush();
        }
    }

    static byte[] json(Order order) {
        return ("{\"id\":\"" + order.id() + "\",\"quantity\":" + order.quantity() + "}").getBytes(StandardCharsets.UTF_8);
    }

    /** How often the handler ran for an order. */
    int calls(String orderId) {
        return invocations.getOrDefault(orderId, List.of()).size();
    }

    /** Stock movements written for this scenario's orders. */
    int effects() throws Exception {
        try (Connection connection = postgres.connect()) {
            return LedgerFixture.movementsWithPrefix(connection, topic + ":");
        }
    }

    /** Waits until the share group has settled every record of the topic: nothing left to deliver or in flight. */
    void awaitSettled(Duration timeout) {
        awaitLag(0, timeout);
    }

    /** Waits until at most {@code records} of the topic are still to deliver or in flight. */
    void awaitLag(long records, Duration timeout) {
        try (Admin admin = admin()) {
            await().atMost(timeout).pollInterval(Duration.ofMillis(500)).until(() -> lag(admin) <= records);
        }
    }

    /**
     * Records of the topic the share group has not settled, by the broker's own figures: the lag it
     * reports per partition, or where it reports none, the distance from the group's start offset to
     * the end (an empty partition, which the group may not list, has none).
     */
    private long lag(Admin admin) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> starts = admin.listShareGroupOffsets(
                Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
        List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)
                .partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(
                partitions.stream().collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()))).all().get();
        long lag = 0;
        for (TopicPartition p : partitions) {
            long end = ends.get(p).offset();
            SharePartitionOffsetInfo start = starts.get(p);
            lag += start == null ? end : start.lag().orElse(Math.max(0, end - start.startOffset()));
        }
        if (lag > 0) {
            LOG.info("share group {}: {} record(s) not settled (start offsets {}, end offsets {})", group, lag, starts,
                    ends);
        }
        return lag;
    }

    /** Every record on a topic, read from the beginning to the end offsets. */
    List<ConsumerRecord<byte[], byte[]>> readAll(String anyTopic) {
        List<ConsumerRecord<byte[], byte[]>> all = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = reader.partitionsFor(anyTopic, Duration.ofSeconds(10)).stream()
                    .map(p -> new TopicPartition(anyTopic, p.partition())).toList();
            if (partitions.isEmpty()) {
                return all;
            }
            reader.assign(partitions);
            reader.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = reader.endOffsets(partitions);
            await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                reader.poll(Duration.ofMillis(100)).forEach(all::add);
                return partitions.stream().allMatch(p -> reader.position(p) >= ends.get(p));
            });
        }
        return all;
    }

    Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
    }

    @Override
    public void close() throws Exception {
        for (IdemKafkaShareConsumer<Order> consumer : consumers) {
            consumer.close();
        }
        connections.close();
    }
}
