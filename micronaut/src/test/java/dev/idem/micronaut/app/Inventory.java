package dev.idem.micronaut.app;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.micronaut.Broker;
import dev.idem.micronaut.IdempotentCompensation;
import dev.idem.micronaut.IdempotentListener;
import io.micronaut.context.annotation.Requires;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The test application: one Kafka and one RocketMQ listener. Each writes its effect (a row in
 * {@code ${test.table}}) through the application's transaction-aware DataSource inside its own
 * {@code @Transactional} method, then throws when the order asks it to: the effect and Idem's
 * ledger row must then both roll back.
 */
@Singleton
@Requires(property = "test.table")
public class Inventory {

    private final DataSource dataSource;
    private final Effects effects;
    private final String table;

    public Inventory(DataSource dataSource, Effects effects, @io.micronaut.context.annotation.Value("${test.table}") String table) {
        this.dataSource = dataSource;
        this.effects = effects;
        this.table = table;
    }

    @IdempotentListener(name = "kafka-orders", topic = "${test.kafka.topic}", group = "${test.kafka.group}",
            key = "id", maxAttempts = 3, lease = "10s", concurrency = 3)
    @Transactional
    public void onKafkaOrder(Order order, Delivery<Order> delivery) throws SQLException {
        apply("kafka", order, delivery);
    }

    @IdempotentListener(name = "rocketmq-orders", topic = "${test.rocketmq.topic}", group = "${test.rocketmq.group}",
            broker = Broker.ROCKETMQ, key = "id", maxAttempts = 3, lease = "10s")
    @Transactional
    public void onRocketMqOrder(Order order) throws SQLException {
        apply("rocketmq", order, null);
    }

    @IdempotentCompensation("kafka-orders")
    public void undoKafka(DeadLetter deadLetter) {
        effects.compensated("kafka", deadLetter.key().value());
    }

    @IdempotentCompensation("rocketmq-orders")
    public void undoRocketMq(DeadLetter deadLetter) {
        effects.compensated("rocketmq", deadLetter.key().value());
    }

    private void apply(String broker, Order order, Delivery<Order> delivery) throws SQLException {
        int call = effects.call(broker, order.id());
        // The transaction's connection (Micronaut's DataSource inside @Transactional): not closed here.
        Connection connection = dataSource.getConnection();
        try (PreparedStatement insert = connection.prepareStatement("insert into " + table
                + " (broker, order_id, quantity) values (?, ?, ?)")) {
            insert.setString(1, broker);
            insert.setString(2, order.id());
            insert.setInt(3, order.quantity());
            insert.executeUpdate();
        }
        if (order.failures() < 0 || call <= order.failures()) {
            throw new IllegalStateException("no stock for " + order.id() + " (call " + call + ")");
        }
    }
}
