package dev.idem.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.testkit.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL table's workload: {@code orders} orders of 1 to 5 units spread over the SKUs, as
 * JSON ({@code {"orderId":…,"sku":…,"quantity":…}}) on a Kafka topic, once or in copies.
 */
final class Orders {

    static final int PARTITIONS = 6;
    static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(Orders.class);

    private final KafkaBroker kafka;
    private final int orders;

    Orders(KafkaBroker kafka, int orders) {
        this.kafka = kafka;
        this.orders = orders;
    }

    static Stock.Order order(int i) {
        return new Stock.Order(String.format("order-%08d", i), Stock.sku(i % Stock.SKUS), 1 + i % 5);
    }

    /** Units every order applied once takes, per SKU index. */
    Map<Integer, Long> deducted() {
        Map<Integer, Long> deducted = new HashMap<>();
        for (int i = 0; i < orders; i++) {
            deducted.merge(i % Stock.SKUS, (long) order(i).quantity(), Long::sum);
        }
        return deducted;
    }

    /**
     * Two producers at once: one sends every order, the other its copies. Copy {@code c} of order
     * {@code i} goes to partition {@code (i + c) % 6}, so the copies of an order are consumed at the
     * same time on three partitions (keyed copies would share one partition and arrive one by one).
     */
    void produce(String topic, int copies) throws InterruptedException {
        long started = System.nanoTime();
        Thread copier = new Thread(() -> send(topic, 1, copies), "bench-pg-copies");
        copier.start();
        send(topic, 0, 1);
        copier.join();
        LOG.info("produced {} orders × {} to {} in {} ms", orders, copies, topic,
                (System.nanoTime() - started) / 1_000_000);
    }

    /** Sends the copies; every send must be acknowledged, or the run stops here, not in a consumer's wait. */
    private void send(String topic, int fromCopy, int toCopy) {
        AtomicReference<Exception> failed = new AtomicReference<>();
        AtomicInteger lost = new AtomicInteger();
        // One request in flight per connection: a first batch refused while a new topic's leader
        // settles is retried before later ones, so the idempotent producer's sequence stays in order.
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 10,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < orders; i++) {
                Stock.Order order = order(i);
                byte[] value = JSON.writeValueAsBytes(order);
                for (int copy = fromCopy; copy < toCopy; copy++) {
                    producer.send(new ProducerRecord<>(topic, (i + copy) % PARTITIONS,
                            order.orderId().getBytes(StandardCharsets.UTF_8), value), (metadata, error) -> {
                                if (error != null) {
                                    lost.incrementAndGet();
                                    failed.compareAndSet(null, error);
                                }
                            });
                }
            }
            producer.flush();
        } catch (Exception e) {
            throw new IllegalStateException("cannot produce the orders", e);
        }
        if (failed.get() != null) {
            throw new IllegalStateException(lost.get() + " order message(s) to " + topic + " were not acknowledged",
                    failed.get());
        }
    }
}
