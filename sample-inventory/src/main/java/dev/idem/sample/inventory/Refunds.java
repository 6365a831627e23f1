package dev.idem.sample.inventory;

import io.micronaut.context.annotation.Property;
import io.micronaut.context.annotation.Value;
import io.micronaut.json.JsonMapper;
import io.micronaut.transaction.TransactionOperations;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compensation of a rejected order: records the refund and publishes an {@code order-refund}
 * event (key: the order id) on Kafka, in one database transaction, so a refund row exists only for
 * an event the broker acknowledged. Idem calls it once per dead-lettered order. Thread-safe.
 */
@Singleton
public final class Refunds {

    private static final Logger LOG = LoggerFactory.getLogger(Refunds.class);
    // Bounded: a compensation that cannot publish fails and Idem retries it a bounded number of times.
    private static final long SEND_TIMEOUT_SECONDS = 10;

    private final TransactionOperations<Connection> transactions;
    private final JsonMapper json;
    private final String topic;
    private final KafkaProducer<String, String> producer;

    Refunds(TransactionOperations<Connection> transactions, JsonMapper json,
            @Value("${inventory.refund-topic:order-refund}") String topic,
            @Property(name = "idem.kafka.bootstrap.servers") String bootstrapServers) {
        this.transactions = transactions;
        this.json = json;
        this.topic = topic;
        this.producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrapServers, "acks", "all"),
                new StringSerializer(), new StringSerializer());
    }

    /** Why the order was dead-lettered: the rejection's message, else Idem's reason. */
    static String why(dev.idem.core.DeadLetter deadLetter) {
        return deadLetter.exceptionMessage().isEmpty() ? deadLetter.reason()
                : deadLetter.reason() + ": " + deadLetter.exceptionMessage();
    }

    /** Decodes a dead letter's payload back into its order. */
    Order order(byte[] body) {
        try {
            return json.readValue(body, Order.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("a dead letter whose body is not an order: "
                    + new String(body, StandardCharsets.UTF_8), e);
        }
    }

    /**
     * Refunds the order: a {@code refund} row and an {@code order-refund} event. With
     * {@code oncePerOrder}, an order already refunded (dead-lettered again after a replay that was
     * rejected again) is not refunded twice.
     */
    void refund(Order order, String reason, boolean oncePerOrder) {
        boolean refunded = transactions.executeWrite(status -> {
            if (oncePerOrder && Stock.refunded(status.getConnection(), order.orderId())) {
                return false;
            }
            Stock.recordRefund(status.getConnection(), order, reason);
            String event = new String(json.writeValueAsBytes(Map.of("orderId", order.orderId(), "sku", order.sku(),
                    "quantity", order.quantity(), "reason", reason)), StandardCharsets.UTF_8);
            producer.send(new ProducerRecord<>(topic, order.orderId(), event)).get(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return true;
        });
        if (refunded) {
            LOG.info("refunded order {}: {}", order.orderId(), reason);
        } else {
            LOG.info("order {} was refunded before; not again", order.orderId());
        }
    }

    @PreDestroy
    void close() {
        producer.close();
    }
}
