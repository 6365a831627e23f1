package dev.idem.benchmarks.soak;

import dev.idem.testkit.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The soak on the test kit's Kafka: dead letters in {@code <topic>.DLT}, created by the adapter. */
final class KafkaSoakBroker implements SoakBroker {

    private static final long TIMEOUT_SECONDS = 30;

    private final KafkaBroker kafka;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Admin admin;

    KafkaSoakBroker(KafkaBroker kafka) {
        this.kafka = kafka;
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer());
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
    }

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public String address() {
        return kafka.bootstrapServers();
    }

    @Override
    public void create(String topic, int partitions, String group) {
        // The dead-letter topic is left to Idem's publisher, which creates it like its source.
        kafka.createTopic(topic, partitions);
    }

    @Override
    public void send(String topic, String id, int partition) throws Exception {
        byte[] bytes = id.getBytes(StandardCharsets.UTF_8);
        producer.send(new ProducerRecord<>(topic, partition, bytes, bytes)).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public String deadLetterTopic(String topic) {
        return topic + ".DLT";
    }

    @Override
    public Map<String, Integer> deadLetters(String topic) throws Exception {
        String dlt = deadLetterTopic(topic);
        Map<String, Integer> copies = new HashMap<>();
        if (!admin.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).contains(dlt)) {
            return copies;
        }
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = reader.partitionsFor(dlt).stream()
                    .map(p -> new TopicPartition(dlt, p.partition())).toList();
            reader.assign(partitions);
            reader.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = reader.endOffsets(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            while (partitions.stream().anyMatch(p -> reader.position(p) < end.get(p))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + dlt + " to its end in " + TIMEOUT_SECONDS + " s");
                }
                for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(200))) {
                    copies.merge(new String(record.value(), StandardCharsets.UTF_8), 1, Integer::sum);
                }
            }
        }
        return copies;
    }

    @Override
    public long lag(String group, String topic) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames()
                .get(TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic).partitions().stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        Map<TopicPartition, Long> end = admin.listOffsets(partitions.stream()
                        .collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest())))
                .all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
        long lag = 0;
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata offset = committed.get(partition);
            lag += end.get(partition) - (offset == null ? 0 : offset.offset());
        }
        return lag;
    }

    @Override
    public Map<String, Long> extraFigures(String group) {
        return Map.of();
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
        admin.close(Duration.ofSeconds(5));
    }
}
