package dev.idem.benchmarks;

import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.kafka.KafkaOutboxPublisher;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outbox on PostgreSQL and the test kit's Kafka: the relay's throughput on a backlog (one relay,
 * then three sharing the table), the time from a transaction's commit to a consumer's receipt of
 * its message at a steady rate, beside a direct send right after the commit, and what a send through
 * the outbox adds to a transaction that updates a row.
 */
final class OutboxBench {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxBench.class);
    private static final int KEYS = 1_000;

    /** The figures of one run. */
    record Figures(int backlog, double oneRelayRowsPerSecond, double threeRelaysRowsPerSecond, Latency outbox,
                   Latency direct, double transactionMicros, double transactionWithSendMicros) {
    }

    private final KafkaBroker kafka;
    private final PostgresDatabase postgres;
    private final Plan plan;

    OutboxBench(KafkaBroker kafka, PostgresDatabase postgres, Plan plan) {
        this.kafka = kafka;
        this.postgres = postgres;
        this.plan = plan;
    }

    Figures run() throws Exception {
        int backlog = plan.quick() ? 5_000 : 50_000;
        double one = drain(backlog, 1);
        double three = drain(backlog, 3);
        int steady = plan.quick() ? 1_000 : plan.steadyRate() * (int) plan.steady().toSeconds();
        Latency outbox = steadyLatency(steady, true);
        Latency direct = steadyLatency(steady, false);
        double[] costs = transactionCosts(plan.quick() ? 1_000 : 5_000);
        return new Figures(backlog, one, three, outbox, direct, costs[0], costs[1]);
    }

    /** Rows per second {@code relays} relays publish from a backlog of {@code rows} committed rows. */
    private double drain(int rows, int relays) throws Exception {
        String topic = topic("drain");
        kafka.createTopic(topic, 6);
        JdbcOutbox outbox = outbox();
        try (Connection tx = connect()) {
            tx.setAutoCommit(false);
            for (int i = 0; i < rows; i++) {
                outbox.send(tx, OutboxMessage.to(topic).key("sku-" + (i % KEYS)).value(Payloads.order(i)));
                if (i % 1_000 == 999) {
                    tx.commit();
                }
            }
            tx.commit();
        }
        List<KafkaOutboxPublisher> publishers = new ArrayList<>();
        List<OutboxRelay> started = new ArrayList<>();
        long begin = System.nanoTime();
        try {
            for (int i = 0; i < relays; i++) {
                KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                        kafka.bootstrapServers())).build();
                publishers.add(publisher);
                started.add(outbox.relay(publisher).build().start());
            }
            while (started.stream().mapToLong(OutboxRelay::published).sum() < rows) {
                TimeUnit.MILLISECONDS.sleep(5);
            }
        } finally {
            started.forEach(OutboxRelay::close);
            publishers.forEach(KafkaOutboxPublisher::close);
        }
        double perSecond = rows / ((System.nanoTime() - begin) / 1e9);
        LOG.info("outbox: {} relay(s) published {} rows at {} rows/s", relays, rows, Math.round(perSecond));
        drop(outbox.table());
        return perSecond;
    }

    /**
     * {@code messages} transactions at the plan's steady rate, each updating a row and sending one
     * message (through the outbox, or straight to Kafka after the commit); from the commit to the
     * consumer's receipt, matched by the message's id (both ends in this JVM).
     */
    private Latency steadyLatency(int messages, boolean throughOutbox) throws Exception {
        String topic = topic(throughOutbox ? "steady-outbox" : "steady-direct");
        kafka.createTopic(topic, 3);
        JdbcOutbox outbox = outbox();
        String counters = counters();
        Map<String, Long> committed = new ConcurrentHashMap<>();
        Map<String, Long> received = new ConcurrentHashMap<>();
        AtomicBoolean reading = new AtomicBoolean(true);
        Thread reader = new Thread(() -> read(topic, plan.steadyRate() + messages, received, reading),
                "outbox-bench-reader");
        reader.start();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                     kafka.bootstrapServers())).build();
             OutboxRelay relay = outbox.relay(publisher).build().start();
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                     ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
                     new ByteArraySerializer(), new ByteArraySerializer());
             Connection tx = connect()) {
            tx.setAutoCommit(false);
            long interval = TimeUnit.SECONDS.toNanos(1) / plan.steadyRate();
            long next = System.nanoTime();
            int warmUp = plan.steadyRate();
            for (int i = 0; i < warmUp + messages; i++) {
                while (System.nanoTime() < next) {
                    Thread.onSpinWait();
                }
                next += interval;
                String key = "sku-" + (i % KEYS);
                update(tx, counters, key);
                // The first second warms up (the topic's metadata, connections): not measured.
                boolean measured = i >= warmUp;
                if (throughOutbox) {
                    String id = outbox.send(tx, OutboxMessage.to(topic).key(key).value(Payloads.order(i)));
                    tx.commit();
                    if (measured) {
                        committed.put(id, System.nanoTime());
                    }
                } else {
                    tx.commit();
                    String id = UUID.randomUUID().toString();
                    if (measured) {
                        committed.put(id, System.nanoTime());
                    }
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                            Payloads.order(i));
                    record.headers().add(OutboxHeaders.MESSAGE_ID, id.getBytes(StandardCharsets.UTF_8));
                    producer.send(record);
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (received.size() < plan.steadyRate() + messages && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(10);
            }
        } finally {
            reading.set(false);
            reader.join();
            drop(outbox.table());
            drop(counters);
        }
        Latencies latencies = new Latencies(messages);
        committed.forEach((id, at) -> {
            Long arrived = received.get(id);
            if (arrived != null) {
                latencies.add(arrived - at);
            }
        });
        Latency latency = latencies.summary("kafka", throughOutbox ? "outbox" : "direct send after commit");
        LOG.info("outbox: {} ({} received, {} measured)", latency, received.size(), latencies.size());
        return latency;
    }

    private void read(String topic, int expected, Map<String, Long> received, AtomicBoolean reading) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "bench-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (reading.get() && received.size() < expected) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(20))) {
                    long now = System.nanoTime();
                    Header id = record.headers().lastHeader(OutboxHeaders.MESSAGE_ID);
                    if (id != null) {
                        received.putIfAbsent(new String(id.value(), StandardCharsets.UTF_8), now);
                    }
                }
            }
        }
    }

    /** Microseconds per transaction updating one row, without and with one send through the outbox. */
    private double[] transactionCosts(int transactions) throws Exception {
        JdbcOutbox outbox = outbox();
        String counters = counters();
        String topic = topic("cost");
        double[] micros = new double[2];
        try (Connection tx = connect()) {
            tx.setAutoCommit(false);
            for (int round = 0; round < 3; round++) {   // the first two warm up
                for (int withSend = 0; withSend < 2; withSend++) {
                    long begin = System.nanoTime();
                    for (int i = 0; i < transactions; i++) {
                        String key = "sku-" + (i % KEYS);
                        update(tx, counters, key);
                        if (withSend == 1) {
                            outbox.send(tx, OutboxMessage.to(topic).key(key).value(Payloads.order(i)));
                        }
                        tx.commit();
                    }
                    micros[withSend] = (System.nanoTime() - begin) / 1e3 / transactions;
                }
            }
        } finally {
            drop(outbox.table());
            drop(counters);
        }
        LOG.info("outbox: a transaction {} µs, with a send through the outbox {} µs", micros[0], micros[1]);
        return micros;
    }

    private static void update(Connection tx, String counters, String key) throws SQLException {
        try (PreparedStatement update = tx.prepareStatement("update " + counters + " set n = n + 1 where sku = ?")) {
            update.setString(1, key);
            update.executeUpdate();
        }
    }

    private String counters() throws SQLException {
        String table = "bench_counter_" + UUID.randomUUID().toString().substring(0, 8);
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.execute("create table " + table + " (sku varchar(16) primary key, n bigint not null)");
            statement.execute("insert into " + table + " select 'sku-' || g, 0 from generate_series(0, " + (KEYS - 1)
                    + ") g");
        }
        return table;
    }

    private JdbcOutbox outbox() {
        String table = "bench_outbox_" + UUID.randomUUID().toString().substring(0, 8);
        return JdbcOutbox.builder(dataSource()).table(table).createTable(true).build();
    }

    private void drop(String table) throws SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.execute("drop table if exists " + table);
            statement.execute("drop table if exists " + table + "_relay");
        }
    }

    private PGSimpleDataSource dataSource() {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(postgres.jdbcUrl());
        dataSource.setUser(postgres.user());
        dataSource.setPassword(postgres.password());
        return dataSource;
    }

    private Connection connect() throws SQLException {
        return dataSource().getConnection();
    }

    private static String topic(String what) {
        return "bench-outbox-" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The report's section. */
    static String markdown(Figures f) {
        return String.format(Locale.ROOT, """

                The outbox (PostgreSQL, the test kit's Kafka, `KafkaOutboxPublisher`, default relay settings): \
                a backlog of %,d committed rows on %,d keys published by one relay, then by three sharing the \
                table; at %s, the time from a transaction's commit to a consumer's receipt of its message, through \
                the outbox and sent straight to Kafka after the commit (after a second of warm-up, not measured); \
                and one transaction updating a row, \
                without and with a send through the outbox (one connection, in a row).

                | measure | value |
                |---|---:|
                | relay throughput, one relay (rows/s) | %,.0f |
                | relay throughput, three relays (rows/s) | %,.0f |
                | commit to receipt through the outbox, p50 / p99 (ms) | %.2f / %.2f |
                | commit to receipt, a direct send after the commit, p50 / p99 (ms) | %.2f / %.2f |
                | a transaction updating a row (µs) | %.0f |
                | the same with a send through the outbox (µs) | %.0f |
                """, f.backlog(), KEYS, "the steady rate", f.oneRelayRowsPerSecond(), f.threeRelaysRowsPerSecond(),
                f.outbox().p50(), f.outbox().p99(), f.direct().p50(), f.direct().p99(), f.transactionMicros(),
                f.transactionWithSendMicros());
    }
}
