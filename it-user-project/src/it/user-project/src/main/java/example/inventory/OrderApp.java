package example.inventory;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.h2.jdbcx.JdbcDataSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The README's examples as a user writes them: sends every order twice, consumes them through Idem
 * into an H2 database, and prints how many stock movements it wrote. Exit status 0 when each order
 * moved stock exactly once and every copy was consumed.
 *
 * <pre>OrderApp kafka|rocketmq &lt;bootstrap servers | name server&gt; &lt;topic&gt; &lt;group&gt; &lt;redis uri&gt; &lt;key prefix&gt; &lt;orders&gt;</pre>
 */
public final class OrderApp {

    private static final Logger LOG = LoggerFactory.getLogger(OrderApp.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    private final String topic;
    private final String group;
    private final int orders;
    private final JdbcDataSource dataSource = new JdbcDataSource();

    private OrderApp(String topic, String group, int orders) {
        this.topic = topic;
        this.group = group;
        this.orders = orders;
        dataSource.setURL("jdbc:h2:mem:inventory;DB_CLOSE_DELAY=-1");
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            throw new IllegalArgumentException("usage: OrderApp kafka|rocketmq <address> <topic> <group> <redis uri>"
                    + " <key prefix> <orders>, but got " + args.length + " arguments");
        }
        OrderApp app = new OrderApp(args[2], args[3], Integer.parseInt(args[6]));
        app.createTables();
        Config config = new Config();
        config.useSingleServer().setAddress(args[4]);
        RedissonClient redisson = Redisson.create(config);
        try {
            RedisClaimStore claims = RedisClaimStore.builder(redisson).keyPrefix(args[5]).build();
            switch (args[0]) {
                case "kafka" -> app.kafka(args[1], claims);
                case "rocketmq" -> app.rocketMq(args[1], claims);
                default -> throw new IllegalArgumentException("broker must be kafka or rocketmq but was " + args[0]);
            }
        } finally {
            redisson.shutdown();
        }
        int movements = app.count("select count(*) from stock_movement");
        int distinct = app.count("select count(distinct order_id) from stock_movement");
        System.out.println("stock movements: " + movements + ", orders: " + distinct);
        System.exit(movements == app.orders && distinct == app.orders ? 0 : 1);
    }

    private void createTables() throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            JdbcEffectLedger.builder(dataSource).createTable(true).build();
            // No key on order_id: a second effect for one order would show as a second row.
            statement.execute("create table stock_movement (order_id varchar(64) not null, sku varchar(64) not null,"
                    + " quantity int not null)");
        }
    }

    /** The README's processor: the effect and the ledger row in one transaction, keyed by the order. */
    private IdempotentProcessor.Builder<Order> processor(RedisClaimStore claims) {
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
        return ledger
                .<Order>processor((delivery, tx) -> deductStock(tx, delivery.payload()))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(order -> order.id() + ":deduct"))
                .claims(claims);
    }

    private static void deductStock(Connection tx, Order order) throws SQLException {
        try (PreparedStatement insert = tx.prepareStatement(
                "insert into stock_movement (order_id, sku, quantity) values (?, ?, ?)")) {
            insert.setString(1, order.id());
            insert.setString(2, order.sku());
            insert.setInt(3, -order.quantity());
            insert.executeUpdate();
        }
    }

    private List<Order> twice() {
        List<Order> sent = new ArrayList<>();
        for (int copy = 0; copy < 2; copy++) {
            for (int i = 0; i < orders; i++) {
                sent.add(new Order(topic + "-" + i, "sku-" + (i % 3), 1 + i % 4));
            }
        }
        return sent;
    }

    private void kafka(String bootstrapServers, RedisClaimStore claims) throws Exception {
        System.out.println("kafka-clients " + AppInfoParser.getVersion());
        Properties producerConfig = new Properties();
        producerConfig.put("bootstrap.servers", bootstrapServers);
        try (KafkaProducer<String, String> producer =
                     new KafkaProducer<>(producerConfig, new StringSerializer(), new StringSerializer())) {
            for (Order order : twice()) {
                producer.send(new ProducerRecord<>(topic, order.id(), order.json()));
            }
            producer.flush();
        }
        Map<String, Object> kafka = Map.of("bootstrap.servers", bootstrapServers, "group.id", group,
                "auto.offset.reset", "earliest");
        IdemKafkaConsumer<Order> consumer = IdemKafkaConsumer.builder(kafka, processor(claims))
                .topics(topic)
                .concurrency(4)
                .build();
        consumer.start();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
            await("every order applied, every copy consumed and committed", () -> applied() && kafkaDrained(admin));
        } finally {
            consumer.close();
        }
    }

    private boolean kafkaDrained(Admin admin) {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            if (committed.isEmpty()) {
                return false;
            }
            Map<TopicPartition, OffsetSpec> latest = committed.keySet().stream()
                    .collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()));
            long end = admin.listOffsets(latest).all().get().values().stream().mapToLong(o -> o.offset()).sum();
            long done = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            return end == 2L * orders && done == end;
        } catch (Exception e) {
            LOG.debug("offsets not readable yet", e);
            return false;
        }
    }

    private void rocketMq(String nameServer, RedisClaimStore claims) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(group + "-producer");
        producer.setNamesrvAddr(nameServer);
        producer.setInstanceName(UUID.randomUUID().toString());
        producer.start();
        try {
            for (Order order : twice()) {
                producer.send(new Message(topic, "order", order.id(), order.json().getBytes(StandardCharsets.UTF_8)));
            }
        } finally {
            producer.shutdown();
        }
        IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer.builder(nameServer, group, processor(claims))
                .subscribe(topic, "*")
                .consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET)
                .batchSize(16)
                .build();
        consumer.start();
        try {
            // A copy that found its order claimed by the other copy is redelivered through the retry
            // topic; the order is applied by the first, so wait for both conditions.
            await("every order applied, every copy consumed", () -> applied() && rocketMqDrained(consumer));
        } finally {
            consumer.close();
        }
    }

    @SuppressWarnings("deprecation") // maxOffset is the client's own way to read a queue's end
    private boolean rocketMqDrained(IdemRocketMqConsumer<Order> consumer) {
        try {
            long end = 0;
            long done = 0;
            for (MessageQueue queue : consumer.consumer().fetchSubscribeMessageQueues(topic)) {
                end += consumer.consumer().maxOffset(queue);
                done += Math.max(0, consumer.consumer().getDefaultMQPushConsumerImpl().getOffsetStore()
                        .readOffset(queue, ReadOffsetType.READ_FROM_MEMORY));
            }
            return end == 2L * orders && done == end;
        } catch (Exception e) {
            LOG.debug("offsets not readable yet", e);
            return false;
        }
    }

    private boolean applied() {
        try {
            return count("select count(distinct order_id) from stock_movement") == orders;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot count stock movements", e);
        }
    }

    private int count(String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getInt(1);
        }
    }

    /** Checks the condition every 100 ms until it holds; a standalone app has no Awaitility. */
    private static void await(String what, BooleanSupplier condition) throws Exception {
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
        CompletableFuture<Void> reached = new CompletableFuture<>();
        poller.scheduleWithFixedDelay(() -> {
            if (condition.getAsBoolean()) {
                reached.complete(null);
            }
        }, 0, 100, TimeUnit.MILLISECONDS);
        try {
            reached.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            LOG.info("{}", what);
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + ": not reached within " + TIMEOUT, e);
        } finally {
            poller.shutdownNow();
        }
    }
}
