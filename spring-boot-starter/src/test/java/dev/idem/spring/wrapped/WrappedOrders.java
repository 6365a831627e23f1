package dev.idem.spring.wrapped;

import dev.idem.core.DeadLetter;
import dev.idem.spring.Idempotent;
import dev.idem.spring.IdempotentCompensation;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * Two existing spring-kafka listeners, a record one and a batch one, as a Spring user has them, with
 * Idem put around each by {@code @Idempotent}: each writes its effect with {@code JdbcTemplate} in a
 * {@code @Transactional} method; a value {@code poison} always fails.
 */
@Component
public class WrappedOrders {

    private static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> COMPENSATIONS = new ConcurrentHashMap<>();
    private static final AtomicInteger LARGEST_BATCH = new AtomicInteger();

    private final JdbcTemplate jdbc;
    private final String table;

    public WrappedOrders(JdbcTemplate jdbc, @Value("${test.table}") String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @KafkaListener(id = "wrapped-records", topics = "${test.records-topic}", groupId = "${test.group}",
            concurrency = "2")
    @Idempotent
    @Transactional
    public void onRecord(ConsumerRecord<String, String> record) {
        apply("records", record);
    }

    @KafkaListener(id = "wrapped-batch", topics = "${test.batch-topic}", groupId = "${test.group}", batch = "true")
    @Idempotent(maxAttempts = 3)
    @Transactional
    public void onBatch(List<ConsumerRecord<String, String>> records) {
        LARGEST_BATCH.accumulateAndGet(records.size(), Math::max);
        for (ConsumerRecord<String, String> record : records) {
            apply("batch", record);
        }
    }

    static void count(String id) {
        CALLS.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    }

    private void apply(String listener, ConsumerRecord<String, String> record) {
        String id = listener + ":" + record.key();
        count(id);
        jdbc.update("insert into " + table + " (id) values (?)", id);
        if ("poison".equals(record.value())) {
            throw new IllegalStateException("stock service refused " + id);
        }
    }

    /** Listener calls by {@code <listener>:<key>}, in every context of the test JVM. */
    public static Map<String, Integer> calls() {
        Map<String, Integer> calls = new java.util.HashMap<>();
        CALLS.forEach((id, n) -> calls.put(id, n.get()));
        return calls;
    }

    public static Map<String, AtomicInteger> compensations() {
        return COMPENSATIONS;
    }

    public static int largestBatch() {
        return LARGEST_BATCH.get();
    }

    @IdempotentCompensation("wrapped-records")
    public void compensateRecord(DeadLetter letter) {
        COMPENSATIONS.computeIfAbsent("records:" + letter.key().value(), k -> new AtomicInteger()).incrementAndGet();
    }

    @IdempotentCompensation("wrapped-rocket")
    public void compensateRocket(DeadLetter letter) {
        COMPENSATIONS.computeIfAbsent("rocket:" + letter.key().value(), k -> new AtomicInteger()).incrementAndGet();
    }

    @IdempotentCompensation("wrapped-batch")
    public void compensateBatch(DeadLetter letter) {
        COMPENSATIONS.computeIfAbsent("batch:" + letter.key().value(), k -> new AtomicInteger()).incrementAndGet();
    }
}
