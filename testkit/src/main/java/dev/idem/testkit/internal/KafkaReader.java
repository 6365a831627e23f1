package dev.idem.testkit.internal;

import dev.idem.testkit.TopicMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a Kafka topic from its start to its end offsets of the moment, without a group. */
public final class KafkaReader {

    // A read that makes no progress for this long gives up: the broker is gone or the topic is not readable.
    private static final Duration STALLED = Duration.ofSeconds(30);

    private KafkaReader() {
    }

    /** Every record of {@code topic} written so far, partition by partition; none when it does not exist. */
    public static List<TopicMessage> read(String bootstrapServers, String topic) {
        List<TopicMessage> all = new ArrayList<>();
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = reader.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            if (partitions.isEmpty()) {
                return all;
            }
            reader.assign(partitions);
            reader.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = reader.endOffsets(partitions);
            long stalledAt = System.nanoTime() + STALLED.toNanos();
            while (partitions.stream().anyMatch(p -> reader.position(p) < ends.getOrDefault(p, 0L))) {
                if (System.nanoTime() - stalledAt > 0) {
                    throw new IllegalStateException("reading " + topic + " made no progress for " + STALLED);
                }
                for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(100))) {
                    records.add(record);
                    stalledAt = System.nanoTime() + STALLED.toNanos();
                }
            }
        }
        records.sort(Comparator.comparingInt((ConsumerRecord<byte[], byte[]> r) -> r.partition())
                .thenComparingLong(ConsumerRecord::offset));
        records.forEach(record -> all.add(message(record)));
        return all;
    }

    private static TopicMessage message(ConsumerRecord<byte[], byte[]> record) {
        Map<String, String> headers = new HashMap<>();
        for (Header header : record.headers()) {
            if (header.value() != null) {
                headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
            }
        }
        return new TopicMessage(record.topic(), record.key(), record.value(), headers, record);
    }
}
