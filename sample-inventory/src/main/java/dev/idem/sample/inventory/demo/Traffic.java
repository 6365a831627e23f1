package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Order;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;

/**
 * Sends orders: each as {@link Scenario#COPIES} copies at once, to consecutive partitions (Kafka)
 * or queues (RocketMQ), so the copies reach different consumer threads and instances concurrently.
 * Thread-safe.
 */
final class Traffic implements AutoCloseable {

    private static final long SEND_TIMEOUT_SECONDS = 30;

    private final String topic;
    private final int partitions;
    private final KafkaProducer<String, String> kafka;
    private final DefaultMQProducer rocketMq;
    private final AtomicLong sent = new AtomicLong();

    Traffic(Infrastructure infrastructure, Names names, int partitions) throws Exception {
        this.topic = names.topic();
        this.partitions = partitions;
        this.kafka = new KafkaProducer<>(Map.of("bootstrap.servers", infrastructure.kafka, "acks", "all",
                "linger.ms", 0), new StringSerializer(), new StringSerializer());
        if (infrastructure.rocketMq != null) {
            rocketMq = new DefaultMQProducer("inventory-demo-producer");
            rocketMq.setNamesrvAddr(infrastructure.rocketMq);
            rocketMq.setInstanceName("inventory-demo-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
            rocketMq.start();
        } else {
            rocketMq = null;
        }
    }

    static String json(Order order) {
        return "{\"orderId\":\"" + order.orderId() + "\",\"sku\":\"" + order.sku() + "\",\"quantity\":" + order.quantity() + "}";
    }

    /** Sends the order's copies on {@code broker} and waits until the broker has them all. */
    void send(Order order, String broker, int index) throws Exception {
        String body = json(order);
        if (broker.equals("rocketmq")) {
            for (int copy = 0; copy < Scenario.COPIES; copy++) {
                int queue = (index + copy) % partitions;
                Message message = new Message(topic, "order", order.orderId(), body.getBytes(StandardCharsets.UTF_8));
                rocketMq.send(message, (queues, msg, arg) -> queues.get((Integer) arg % queues.size()), queue);
                sent.incrementAndGet();
            }
            return;
        }
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (int copy = 0; copy < Scenario.COPIES; copy++) {
            acks.add(kafka.send(new ProducerRecord<>(topic, (index + copy) % partitions, order.orderId(), body)));
        }
        for (Future<RecordMetadata> ack : acks) {
            ack.get(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            sent.incrementAndGet();
        }
    }

    /** Deliveries sent so far (copies included). */
    long sent() {
        return sent.get();
    }

    @Override
    public void close() {
        kafka.close();
        if (rocketMq != null) {
            rocketMq.shutdown();
        }
    }
}
