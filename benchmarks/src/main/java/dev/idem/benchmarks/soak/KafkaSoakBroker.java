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
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The soak on the test kit's Kafka, in a consumer group or a share group: dead letters in
 * {@code <topic>.DLT}, created by the adapter.
 */
final class KafkaSoakBroker implements SoakBroker {

    private static final long TIMEOUT_SECONDS = 30;

    private final KafkaBroker kafka;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Admin admin;
    // A share group (KIP-932): its start offset and limits are group configs, its lag its own figures.
    private final boolean share;

    KafkaSoakBroker(KafkaBroker kafka, boolean share) {
        this.kafka = kafka;
        this.share = share;
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer());
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()));
    }

    @Override
    public String name() {
        return share ? "share" : "kafka";
    }

    @Override
    public String address() {
        return kafka.bootstrapServers();
    }

    @Override
    public void create(String topic, int partitions, String group) {
        // The dead-letter topic is left to Idem's publisher, which creates it like its source.
        kafka.createTopic(topic, partitions);
        if (share) {
            // From the first record; room for maxAttempts + 2 deliveries and the kills' lost ones; a
            // killed member's records come back after 15 s.
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            List<AlterConfigOp> settings = Map.of("share.auto.offset.reset", "earliest", "share.delivery.count.limit",
                    "10", "share.record.lock.duration.ms", "15000").entrySet().stream()
                    .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                    .toList();
            try {
                admin.incrementalAlterConfigs(Map.of(resource, settings)).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("could not configure share group " + group, e);
            }
        }
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
    public Map<String, Integer> deadLetters(String topic) {
        Map<String, Integer> copies = new HashMap<>();
        kafka.read(deadLetterTopic(topic)).forEach(letter -> copies.merge(letter.text(), 1, Integer::sum));
        return copies;
    }

    @Override
    public long lag(String group, String topic) throws Exception {
        if (share) {
            return shareLag(group, topic);
        }
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

    /**
     * Records the share group has not settled, by the broker's own figures: the lag it reports per
     * partition, or where it reports none, the distance from the group's start offset to the end.
     */
    private long shareLag(String group, String topic) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> starts = admin.listShareGroupOffsets(
                Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group)
                .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames()
                .get(TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic).partitions().stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(partitions.stream()
                .collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()))).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        long lag = 0;
        for (TopicPartition partition : partitions) {
            long end = ends.get(partition).offset();
            SharePartitionOffsetInfo start = starts.get(partition);
            lag += start == null ? end : start.lag().orElse(Math.max(0, end - start.startOffset()));
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
