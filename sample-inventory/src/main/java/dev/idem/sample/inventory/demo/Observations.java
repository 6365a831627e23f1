package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Stock;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * What the demo reads to judge a run, from the systems of record and the brokers, never from the
 * service's own claims: the database's stock, deductions and refunds, the dead-letter topics and
 * the refund events, the consumer group's lag. Not thread-safe.
 */
final class Observations implements AutoCloseable {

    private final Infrastructure infrastructure;
    private final Infrastructure.Database database;
    private final Names names;
    private final Admin admin;
    private final DefaultMQAdminExt rocketMqAdmin;

    Observations(Infrastructure infrastructure, Infrastructure.Database database, Names names) throws Exception {
        this.infrastructure = infrastructure;
        this.database = database;
        this.names = names;
        this.admin = Admin.create(Map.of("bootstrap.servers", infrastructure.kafka));
        if (infrastructure.rocketMq != null) {
            rocketMqAdmin = new DefaultMQAdminExt(10_000);
            rocketMqAdmin.setNamesrvAddr(infrastructure.rocketMq);
            rocketMqAdmin.setInstanceName("inventory-demo-admin-" + System.nanoTime());
            rocketMqAdmin.start();
        } else {
            rocketMqAdmin = null;
        }
    }

    /** Counts for the progress line and for deciding that the run has settled. */
    record Counts(long deductions, long refunds, long deadLetters, long lag) {
    }

    Counts counts() throws Exception {
        try (Connection c = database.connect()) {
            return new Counts(Stock.count(c, "deduction"), Stock.count(c, "refund"),
                    endOffsets(names.kafkaDeadLetters()).values().stream().mapToLong(Long::longValue).sum()
                            + rocketMqDeadLetters(), lag());
        }
    }

    Map<String, Integer> stock() throws SQLException {
        try (Connection c = database.connect()) {
            return Stock.all(c);
        }
    }

    Map<String, Integer> rowsPerOrder(String table) throws SQLException {
        try (Connection c = database.connect()) {
            return Stock.rowsPerOrder(c, table);
        }
    }

    /** Messages in the RocketMQ dead-letter topic; 0 without RocketMQ. */
    long rocketMqDeadLetters() throws Exception {
        if (rocketMqAdmin == null) {
            return 0;
        }
        try {
            return rocketMqAdmin.examineTopicStats(names.rocketMqDeadLetters()).getOffsetTable().values().stream()
                    .mapToLong(o -> o.getMaxOffset() - o.getMinOffset()).sum();
        } catch (org.apache.rocketmq.client.exception.MQClientException e) {
            return 0;   // not created yet: no dead letter so far
        }
    }

    /** The record keys of a Kafka topic, from its start to its end now, in partition order. */
    List<String> keys(String topic) {
        Map<TopicPartition, Long> ends = endOffsets(topic);
        List<String> keys = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers", infrastructure.kafka),
                new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(ends.keySet());
            consumer.seekToBeginning(ends.keySet());
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (ends.entrySet().stream().anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " to its end in 30 s");
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    keys.add(record.key());
                }
            }
        }
        return keys;
    }

    /** Copies per key in a Kafka topic. */
    Map<String, Integer> keyCounts(String topic) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        keys(topic).forEach(key -> counts.merge(key, 1, Integer::sum));
        return counts;
    }

    private Map<TopicPartition, Long> endOffsets(String topic) {
        try {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                request.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            return admin.listOffsets(request).all().get().entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the end offsets of " + topic, e);
        }
    }

    /** Kafka records of the order topic the group has not committed yet. */
    long lag() throws Exception {
        Map<TopicPartition, Long> ends = endOffsets(names.topic());
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(names.group())
                .partitionsToOffsetAndMetadata().get();
        long lag = 0;
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            OffsetAndMetadata offset = committed.get(end.getKey());
            lag += end.getValue() - (offset == null ? 0 : offset.offset());
        }
        return lag;
    }

    @Override
    public void close() {
        admin.close();
        if (rocketMqAdmin != null) {
            rocketMqAdmin.shutdown();
        }
    }
}
