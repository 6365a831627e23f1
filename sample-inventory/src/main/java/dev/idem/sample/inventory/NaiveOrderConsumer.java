package dev.idem.sample.inventory;

import io.micronaut.context.annotation.Property;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.json.JsonMapper;
import io.micronaut.transaction.TransactionOperations;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer without guards ({@code inventory.guards=off}), for the demo's proof that its oracle
 * can fail: what a hand-written at-least-once consumer does. It runs the same deduction in a
 * transaction for every delivery, retries a failure in place, and sends a rejection to
 * {@code <topic>.DLT} and refunds it; it commits offsets after each poll. No claim, no ledger, no
 * unique order id: every duplicate delivery deducts again.
 */
@Singleton
@Requires(property = Guards.PROPERTY, value = Guards.OFF)
public final class NaiveOrderConsumer implements ApplicationEventListener<StartupEvent>, Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(NaiveOrderConsumer.class);
    // The usual hand-written retry: wait a second, try the same record again.
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private final TransactionOperations<Connection> transactions;
    private final Refunds refunds;
    private final JsonMapper json;
    private final String topic;
    private final int transientPercent;
    private final Map<String, Object> consumerSettings;
    private final KafkaProducer<byte[], byte[]> deadLetterProducer;
    private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();
    private final AtomicLong deadLetters = new AtomicLong();
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private Thread thread;

    NaiveOrderConsumer(TransactionOperations<Connection> transactions, Refunds refunds, JsonMapper json,
                       @Value("${inventory.topic:order-paid}") String topic,
                       @Value("${inventory.group:inventory}") String group,
                       @Value("${inventory.faults.transient-percent:0}") int transientPercent,
                       @Property(name = "idem.kafka.bootstrap.servers") String bootstrapServers,
                       @Value("${idem.kafka.session.timeout.ms:45000}") int sessionTimeoutMs) {
        this.transactions = transactions;
        this.refunds = refunds;
        this.json = json;
        this.topic = topic;
        this.transientPercent = transientPercent;
        this.consumerSettings = Map.of("bootstrap.servers", bootstrapServers, "group.id", group,
                "auto.offset.reset", "earliest", "enable.auto.commit", "false",
                "session.timeout.ms", sessionTimeoutMs, "heartbeat.interval.ms", Math.max(500, sessionTimeoutMs / 10));
        this.deadLetterProducer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrapServers),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Override
    public void onApplicationEvent(StartupEvent event) {
        consumer = new KafkaConsumer<>(consumerSettings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic));
        thread = new Thread(this, "naive-order-consumer");
        thread.start();
        LOG.warn("inventory.guards=off: consuming {} WITHOUT Idem (no claim, no ledger, no unique order id)", topic);
    }

    /** Dead letters this instance sent since it started. */
    long deadLetters() {
        return deadLetters.get();
    }

    @Override
    public void run() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    handle(record);
                }
                consumer.commitSync();
            }
        } catch (WakeupException e) {
            LOG.info("naive consumer stopping");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            consumer.close();
        }
    }

    private void handle(ConsumerRecord<byte[], byte[]> record) throws InterruptedException {
        Order order;
        try {
            order = json.readValue(record.value(), Order.class);
        } catch (IOException e) {
            LOG.warn("skipping an undecodable record at {}-{}@{}", record.topic(), record.partition(), record.offset(), e);
            return;
        }
        while (running) {
            try {
                transactions.executeWrite(status -> {
                    Stock.deduct(status.getConnection(), order);
                    if (Faults.chosen(order.orderId(), transientPercent) && failedOnce.add(order.orderId())) {
                        throw new IllegalStateException("simulated transient failure of order " + order.orderId());
                    }
                    return null;
                });
                return;
            } catch (RuntimeException e) {
                Rejection rejection = rejection(e);
                if (rejection != null) {
                    deadLetter(record, order, rejection);
                    return;
                }
                LOG.info("order {} failed, retrying in {}: {}", order.orderId(), RETRY_PAUSE, e.toString());
                TimeUnit.MILLISECONDS.sleep(RETRY_PAUSE.toMillis());
            }
        }
    }

    private void deadLetter(ConsumerRecord<byte[], byte[]> record, Order order, Rejection rejection) {
        try {
            deadLetterProducer.send(new ProducerRecord<>(topic + ".DLT", record.key(), record.value())).get();
        } catch (Exception e) {
            throw new IllegalStateException("dead letter of order " + order.orderId() + " not sent", e);
        }
        deadLetters.incrementAndGet();
        refunds.refund(order, rejection.getMessage(), false);
    }

    private static Rejection rejection(Throwable e) {
        int depth = 0;
        // A bounded walk: a cause chain may loop back on itself.
        for (Throwable t = e; t != null && depth < 32; t = t.getCause(), depth++) {
            if (t instanceof Rejection r) {
                return r;
            }
        }
        return null;
    }

    @PreDestroy
    void close() throws InterruptedException {
        running = false;
        if (consumer != null) {
            consumer.wakeup();
        }
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }
        deadLetterProducer.close();
    }
}
