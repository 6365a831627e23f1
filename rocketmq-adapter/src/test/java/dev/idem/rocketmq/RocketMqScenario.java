package dev.idem.rocketmq;

import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetter;
import dev.idem.core.DedupCheck;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.IdempotentProcessor;
import dev.idem.redis.Guards;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.jdbc.ThreadConnections;
import dev.idem.redis.RedisClaimStore;
import dev.idem.core.Backoff;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.protocol.admin.TopicStatsTable;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.redisson.api.RedissonClient;

/**
 * One test's world on the real RocketMQ broker: a topic, Idem consumers with Redis claims and a
 * PostgreSQL ledger, and what they leave behind: stock movements, handler calls, compensations.
 */
final class RocketMqScenario implements AutoCloseable {

    record Order(String id, int quantity) {
    }

    /** Runs before the effect; throw to fail the attempt. */
    @FunctionalInterface
    interface Behaviour {
        void before(Order order, int invocation, int brokerAttempt) throws Exception;
    }

    final String topic;
    final String group;
    final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    final Map<String, List<Integer>> invocations = new ConcurrentHashMap<>();
    final List<String> appliedOrder = new CopyOnWriteArrayList<>();

    private final RocketMqBroker rocketMq;
    private final RedissonClient redisson;
    private final PostgresDatabase postgres;
    private final TestNames names;
    private final Guards guards;
    private final ThreadConnections connections;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private volatile Behaviour behaviour = (order, invocation, attempt) -> { };
    private volatile int maxDelayMillis;

    RocketMqScenario(RocketMqBroker rocketMq, RedissonClient redisson, PostgresDatabase postgres, TestNames names,
                     int queues, Guards guards) throws Exception {
        this.rocketMq = rocketMq;
        this.redisson = redisson;
        this.postgres = postgres;
        this.names = names;
        this.guards = guards;
        this.topic = names.topic();
        this.group = names.group();
        rocketMq.createTopic(topic, queues);
        rocketMq.createTopic(topic + "_DLQ", 1);
        rocketMq.createRetryTopic(group);
        connections = new ThreadConnections(postgres.jdbcUrl(), postgres.user(), postgres.password());
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
    }

    RocketMqScenario behaviour(Behaviour behaviour) {
        this.behaviour = behaviour;
        return this;
    }

    RocketMqScenario handlerDelay(int maxDelayMillis) {
        this.maxDelayMillis = maxDelayMillis;
        return this;
    }

    String orderId(int i) {
        return topic + ":" + i;
    }

    private JdbcEffectLedger ledger() {
        return JdbcEffectLedger.builder(connections.dataSource()).build();
    }

    IdempotentProcessor.Builder<Order> processorBuilder() {
        JdbcEffectLedger ledger = ledger();
        DeliveryHandler<Order> handler = guards.handler(ledger, connections.dataSource(), (delivery, tx) -> {
            invoked(delivery.payload(), delivery.envelope().brokerAttempt());
            LedgerFixture.<Order>insertMovement().handle(delivery, tx);
            appliedOrder.add(delivery.payload().id());
        });
        return IdempotentProcessor.builder(handler)
                .claims(guards.claims(redisson, names.keyPrefix()))
                .dedupCheck(guards.dedupCheck(ledger))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(Order::id))
                .compensation(compensated::add)
                .backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .meterRegistry(new SimpleMeterRegistry());
    }

    private void invoked(Order order, int brokerAttempt) throws Exception {
        List<Integer> calls = invocations.computeIfAbsent(order.id(), id -> new CopyOnWriteArrayList<>());
        calls.add(brokerAttempt);
        behaviour.before(order, calls.size(), brokerAttempt);
        if (maxDelayMillis > 0) {
            TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextInt(maxDelayMillis * 1000));
        }
    }

    IdemRocketMqConsumer<Order> startConsumer(Consumer<IdemRocketMqConsumer.Builder<Order>> settings) {
        IdemRocketMqConsumer.Builder<Order> builder = IdemRocketMqConsumer
                .builder(rocketMq.nameServerAddress(), group, processorBuilder())
                .subscribe(topic, "*").consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET).concurrency(8)
                // Two consumers of a group started together race on their subscription's version, and
                // the broker refuses one's pulls ("subscription is not latest") until its next heartbeat:
                // 30 s by default (apache/rocketmq#3434). A test needs no such wait; a test's own
                // client(...) replaces this.
                .client(client -> client.setHeartbeatBrokerInterval(1_000));
        settings.accept(builder);
        IdemRocketMqConsumer<Order> consumer = builder.build();
        closeables.add(consumer);
        consumer.start();
        return consumer;
    }

    /** An existing, plain listener wrapped by Idem in one line, guarded by {@code check}. */
    DefaultMQPushConsumer startWrapped(MessageListenerConcurrently existing, DedupCheck<Object> check) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(rocketMq.nameServerAddress());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setMaxReconsumeTimes(5 + 32);
        consumer.subscribe(topic, "*");
        IdemRocketMq.Idem idem = IdemRocketMq.wrapConcurrently(consumer, existing, processor -> processor
                .claims(RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build())
                .dedupCheck(check).keys(KeySource.messageKey()).meterRegistry(new SimpleMeterRegistry()));
        closeables.add(idem);
        consumer.start();
        return consumer;
    }

    /** Sends each order {@code copies} times, keyed by order id, spread over the queues. */
    void produce(int orders, int copies) throws Exception {
        List<Message> messages = new ArrayList<>();
        for (int copy = 0; copy < copies; copy++) {
            for (int i = 0; i < orders; i++) {
                messages.add(message(json(new Order(orderId(i), 1)), orderId(i)));
            }
        }
        send(messages);
    }

    Message message(byte[] body, String keys) {
        Message message = new Message(topic, body);
        if (keys != null) {
            message.setKeys(keys);
        }
        return message;
    }

    void send(List<Message> messages) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer-" + System.nanoTime()));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            for (Message message : messages) {
                producer.send(message);
            }
        } finally {
            producer.shutdown();
        }
    }

    /** Sends messages to one queue, in order. */
    void sendToQueue(List<Message> messages, int queue) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer-" + System.nanoTime()));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            for (Message message : messages) {
                producer.send(message, (queues, msg, arg) -> queues.get(queue % queues.size()), null);
            }
        } finally {
            producer.shutdown();
        }
    }

    static byte[] json(Order order) {
        return ("{\"id\":\"" + order.id() + "\",\"quantity\":" + order.quantity() + "}").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Messages RocketMQ itself moved to {@code %DLQ%<group>} (after maxReconsumeTimes), counted on the
     * broker; zero when the broker never created that topic.
     */
    long brokerDeadLetters() throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(rocketMq.nameServerAddress());
        admin.setInstanceName("dlq-count-" + System.nanoTime());
        admin.start();
        try {
            TopicStatsTable stats = admin.examineTopicStats(MixAll.DLQ_GROUP_TOPIC_PREFIX + group);
            return stats.getOffsetTable().values().stream()
                    .mapToLong(offsets -> offsets.getMaxOffset() - offsets.getMinOffset()).sum();
        } catch (MQClientException e) {
            if (String.valueOf(e.getMessage()).contains("route")) {
                return 0;
            }
            throw e;
        } finally {
            admin.shutdown();
        }
    }

    int effects() throws Exception {
        try (Connection connection = postgres.connect()) {
            return LedgerFixture.movementsWithPrefix(connection, topic + ":");
        }
    }

    int calls() {
        return invocations.values().stream().mapToInt(List::size).sum();
    }

    /** Waits until handler calls stop changing for {@code quiet}. */
    void awaitQuiet(Duration quiet, Duration timeout) {
        int[] last = {-1};
        long[] since = {System.nanoTime()};
        await().atMost(timeout).pollInterval(Duration.ofMillis(100)).until(() -> {
            int now = calls();
            if (now != last[0]) {
                last[0] = now;
                since[0] = System.nanoTime();
            }
            return System.nanoTime() - since[0] >= quiet.toNanos();
        });
    }

    /**
     * Every message in this scenario's dead-letter topic, read after {@code quiet} (for any still on
     * their way) with the test kit's reader.
     */
    List<MessageExt> deadLetters(Duration quiet) {
        await().pollDelay(quiet).atMost(quiet.plusSeconds(1)).until(() -> true);
        return rocketMq.read(topic + "_DLQ").stream().map(m -> m.source(MessageExt.class)).toList();
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        connections.close();
    }
}
