package dev.idem.benchmarks;

import dev.idem.core.ConsumerState;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The realistic table: a Kafka consumer whose handler deducts stock in PostgreSQL in one transaction,
 * four ways. {@code raw} is the seed approach (a dedup table whose primary key refuses a copy in
 * the same transaction), {@code idem} an {@link IdemKafkaConsumer} with the {@link JdbcEffectLedger}
 * as users build it, {@code camel} Camel's idempotent consumer with its JDBC repository in the same
 * database ({@link CamelPeer}), {@code naive} the SET NX PX / SET wrapper around the same update. Run on a topic
 * with every order once and on one with every order three times; in a measured round every variant
 * runs until it has every message, then the stock is checked and the database's transactions counted.
 */
final class PgBench {

    private static final Logger LOG = LoggerFactory.getLogger(PgBench.class);
    // Idem's concurrency, the raw loop's threads and the pool's connections: HikariCP's rule of thumb
    // (cores × 2 + disks) on 2 cores, and a connection for each worker, which holds one at a time.
    private static final int WORKERS = 4;
    // After the measured window a variant still consumes the rest, so that the stock can be checked.
    private static final Duration DRAIN = Duration.ofSeconds(120);

    private final KafkaBroker kafka;
    private final RedissonClient redisson;
    private final PostgresDatabase postgres;
    private final RedisProbe probe;
    private final Plan plan;

    PgBench(KafkaBroker kafka, RedissonClient redisson, PostgresDatabase postgres, Plan plan) {
        this.kafka = kafka;
        this.redisson = redisson;
        this.postgres = postgres;
        this.probe = new RedisProbe(redisson);
        this.plan = plan;
    }

    /** Every order once ({@code pg}), then three times ({@code pg-x3}): the rounds of each, warm-ups not returned. */
    List<Result> throughput() throws Exception {
        Orders orders = new Orders(kafka, plan.pgOrders());
        Map<Integer, Long> deducted = orders.deducted();
        List<Result> results = new ArrayList<>();
        try (Stock stock = new Stock(postgres)) {
            for (int copies : List.of(1, 3)) {
                String topic = "bench-pg-" + UUID.randomUUID().toString().substring(0, 8);
                kafka.createTopic(topic, Orders.PARTITIONS);
                orders.produce(topic, copies);
                int messages = plan.pgOrders() * copies;
                // With copies, Idem also as two consumers of the group, whose partitions the copies of an
                // order span (Orders: copy c on partition i + c): copies meet keys held by the other replica.
                List<String> variants = copies == 1 ? List.of("raw", "idem", "camel", "naive")
                        : List.of("raw", "idem", "idem-2", "camel", "naive");
                results.addAll(Rounds.run(copies == 1 ? "pg" : "pg-x3", plan, probe, variants,
                        (variant, group, limit) -> run(stock, topic, messages, deducted, variant, group, limit)));
            }
        }
        return results;
    }

    /**
     * One variant on fresh tables and a pool of its own. A measured round then consumes the rest of
     * the topic, checks the stock and counts the transactions once the pool's backends ended; the
     * warm-up (Rounds gives it {@code plan.warmUp()}) stops at its limit.
     */
    private Meter.Measured run(Stock stock, String topic, int messages, Map<Integer, Long> deducted, String variant,
                               String group, Duration limit) throws Exception {
        boolean drain = !limit.equals(plan.warmUp());
        stock.reset();
        long transactionsBefore = stock.transactions();
        Meter meter = new Meter();
        Meter.Measured measured;
        try (HikariDataSource pool = pool(group)) {
            Consumed consumed = new Consumed(meter, messages, limit, drain);
            measured = switch (variant) {
                case "raw" -> withPollLoop(topic, group, consumed, order -> stock.deductOnce(pool, order));
                case "naive" -> withPollLoop(topic, group, consumed, order -> naive(stock, pool, group, order));
                case "idem" -> withIdem(topic, group, consumed, stock, pool, 1);
                case "idem-2" -> withIdem(topic, group, consumed, stock, pool, 2);
                case "camel" -> CamelPeer.consumeOrders(kafka.bootstrapServers(), topic, group, pool, WORKERS, consumed.meter(),
                        order -> {
                            try (Connection connection = pool.getConnection()) {
                                stock.deduct(connection, order);
                            }
                        }, () -> consumed.await(() -> null));
                default -> throw new IllegalArgumentException(variant);
            };
        }
        if (!drain) {
            return measured;
        }
        stock.awaitBackendsGone(group);
        double transactions = (stock.transactions() - transactionsBefore) / (double) meter.handledSoFar();
        Result.Database database = stock.check(transactions, deducted);
        LOG.info("pg {} × {}: {} transactions per message, stock {} (expected {}, {} SKUs wrong)", variant,
                messages / plan.pgOrders(), String.format("%.3f", transactions), database.stock(),
                database.expectedStock(), database.wrongSkus());
        return new Meter.Measured(measured.messages(), measured.seconds(), database, meter.handledSoFar());
    }

    /** How long a variant consumes: {@code messages} or {@code limit} measured, then the rest if {@code drain}. */
    private record Consumed(Meter meter, int messages, Duration limit, boolean drain) {

        Meter.Measured await(Supplier<Throwable> failure) throws Exception {
            Meter.Measured measured = meter.await(messages, limit);
            if (drain) {
                meter.await(messages, DRAIN);
                if (meter.handledSoFar() < messages) {
                    throw new IllegalStateException(meter.handledSoFar() + " of " + messages + " messages consumed in "
                            + DRAIN, failure.get());
                }
            }
            return measured;
        }
    }

    /** The naive wrapper: SET NX PX as a claim, the update (one statement, one transaction), SET done. */
    private void naive(Stock stock, DataSource pool, String group, Stock.Order order) throws Exception {
        RBucket<String> bucket = redisson.getBucket(group + ":" + order.orderId(), StringCodec.INSTANCE);
        if (bucket.setIfAbsent("claimed", Duration.ofSeconds(30))) {
            try (Connection connection = pool.getConnection()) {
                stock.deduct(connection, order);
            }
            bucket.set("done", Duration.ofDays(7));
        }
    }

    private HikariDataSource pool(String application) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(postgres.jdbcUrl());
        config.setUsername(postgres.user());
        config.setPassword(postgres.password());
        config.setMaximumPoolSize(WORKERS);
        config.setPoolName(application);
        // Names the backends, so the run can wait for them to end (and report their transactions).
        config.addDataSourceProperty("ApplicationName", application);
        return new HikariDataSource(config);
    }

    /** A handler of the raw and naive loops. */
    private interface OrderHandler {
        void handle(Stock.Order order) throws Exception;
    }

    /**
     * Raw and naive: poll, handle the partitions of the poll on {@link #WORKERS} threads (each in
     * offset order), commitSync. A user's parallel loop, so the three variants reach the database
     * through the same number of connections.
     */
    private Meter.Measured withPollLoop(String topic, String group, Consumed consumed, OrderHandler handler)
            throws Exception {
        Meter meter = consumed.meter();
        Map<String, Object> config = consumerConfig(group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch joined = new CountDownLatch(1);
        ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
        Thread loop = new Thread(() -> {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (!stop.get()) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    if (!consumer.assignment().isEmpty()) {
                        joined.countDown();
                    }
                    if (records.isEmpty()) {
                        continue;
                    }
                    meter.arrived();
                    List<Future<?>> running = new ArrayList<>();
                    Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
                    for (TopicPartition partition : records.partitions()) {
                        List<ConsumerRecord<byte[], byte[]>> batch = records.records(partition);
                        running.add(workers.submit(() -> {
                            for (ConsumerRecord<byte[], byte[]> record : batch) {
                                handler.handle(Orders.JSON.readValue(record.value(), Stock.Order.class));
                            }
                            return null;
                        }));
                        commits.put(partition, new OffsetAndMetadata(batch.get(batch.size() - 1).offset() + 1));
                    }
                    for (Future<?> task : running) {
                        task.get();
                    }
                    consumer.commitSync(commits);
                    meter.handled(records.count());
                }
            } catch (Exception | Error e) {
                failure.set(e);
            }
        }, "bench-pg-poll-loop");
        loop.start();
        try {
            if (!joined.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the poll loop did not join its group", failure.get());
            }
            return consumed.await(failure::get);
        } finally {
            stop.set(true);
            loop.join();
            workers.shutdown();
        }
    }

    /**
     * Idem as users build it (the ledger's processor, the update in the ledger's transaction), as
     * {@code replicas} consumers of the group, each with its own claim store and
     * processor (as replicas in processes of their own), the workers shared out between them.
     */
    private Meter.Measured withIdem(String topic, String group, Consumed consumed, Stock stock, DataSource pool,
                                    int replicas) throws Exception {
        Meter meter = consumed.meter();
        Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
        JdbcEffectLedger ledger = stock.ledger(pool);
        List<IdemKafkaConsumer<Stock.Order>> consumers = new ArrayList<>();
        try {
            for (int replica = 0; replica < replicas; replica++) {
                IdempotentProcessor.Builder<Stock.Order> processor = ledger.<Stock.Order>processor((delivery, tx) -> {
                            meter.arrived();
                            stock.deduct(tx, delivery.payload());
                        })
                        .codec(PayloadCodec.json(Stock.Order.class))
                        .keys(KeySource.payload(order -> order.orderId() + ":deduct"))
                        .claims(RedisClaimStore.builder(redisson).keyPrefix("bench:" + group + ":").build())
                        .deadLetters(letter -> {
                            throw new IllegalStateException("no dead letters expected: " + letter);
                        })
                        .onOutcome(outcome -> {
                            outcomes.computeIfAbsent(outcome.getClass().getSimpleName(), name -> new LongAdder()).increment();
                            if (outcome.disposition().acknowledges()) {
                                meter.handled(1);
                            }
                        })
                        .meterRegistry(new SimpleMeterRegistry());
                consumers.add(IdemKafkaConsumer.builder(consumerConfig(group), processor)
                        .topics(topic).concurrency(WORKERS / replicas).build());
            }
            consumers.forEach(IdemKafkaConsumer::start);
            long waiting = System.nanoTime();
            for (IdemKafkaConsumer<Stock.Order> consumer : consumers) {
                while (consumer.state() != ConsumerState.RUNNING) {
                    if (System.nanoTime() - waiting > Duration.ofSeconds(60).toNanos()) {
                        throw new IllegalStateException("Idem's consumer did not join its group", consumer.failure());
                    }
                    Thread.sleep(10);
                }
            }
            Meter.Measured measured = consumed.await(() -> consumers.stream().map(IdemKafkaConsumer::failure)
                    .filter(Objects::nonNull).findFirst().orElse(null));
            LOG.info("pg idem ({} consumer(s)) outcomes: {}", replicas, new TreeMap<>(outcomes));
            return measured;
        } finally {
            for (IdemKafkaConsumer<Stock.Order> consumer : consumers) {
                consumer.close();
            }
        }
    }

    private Map<String, Object> consumerConfig(String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return config;
    }
}
