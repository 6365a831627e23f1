package dev.idem.benchmarks;

import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.share.IdemKafkaShareConsumer;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka share groups: one topic consumed from its beginning by a new share group per variant and
 * round, one member each. {@code raw} and {@code naive} (the per-message SET NX PX / SET wrapper)
 * share one poll loop in implicit acknowledgement (every record accepted at the next poll);
 * {@code idem} is an {@link IdemKafkaShareConsumer} as users build it, with the Redis claim store and
 * no business check.
 */
final class ShareBench {

    private static final Logger LOG = LoggerFactory.getLogger(ShareBench.class);
    private static final int PARTITIONS = 6;

    private final KafkaBroker kafka;
    private final RedissonClient redisson;
    private final RedisProbe probe;
    private final Plan plan;

    ShareBench(KafkaBroker kafka, RedissonClient redisson, Plan plan) {
        this.kafka = kafka;
        this.redisson = redisson;
        this.probe = new RedisProbe(redisson);
        this.plan = plan;
    }

    /** The warm-up round, then {@code plan.rounds()} rounds of raw, idem, naive; warm-up not returned. */
    List<Result> throughput() throws Exception {
        String topic = "share-bench-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopic(topic, PARTITIONS);
        produce(topic, plan.shareMessages());
        return Rounds.run("kafka-share", plan, probe, (variant, group, limit) -> run(topic, variant, group, limit));
    }

    private Meter.Measured run(String topic, String variant, String group, Duration limit) throws Exception {
        startAtTheBeginning(group);
        Meter meter = new Meter();
        return switch (variant) {
            case "raw" -> withPollLoop(topic, group, meter, limit, record -> { });
            case "naive" -> {
                String prefix = group + ":";
                yield withPollLoop(topic, group, meter, limit, record -> {
                    RBucket<String> bucket = redisson.getBucket(prefix + new String(record.key(), StandardCharsets.UTF_8),
                            StringCodec.INSTANCE);
                    if (bucket.setIfAbsent("claimed", Duration.ofSeconds(30))) {
                        bucket.set("done", Duration.ofDays(7));
                    }
                });
            }
            case "idem" -> withIdem(topic, group, meter, limit);
            default -> throw new IllegalArgumentException(variant);
        };
    }

    /** A new share group starts at the latest record unless told otherwise; Idem needs room above 5 deliveries. */
    private void startAtTheBeginning(String group) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("share.delivery.count.limit", "10"), AlterConfigOp.OpType.SET))))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Raw and naive: poll and handle; each poll accepts the records of the one before (implicit mode). */
    private Meter.Measured withPollLoop(String topic, String group, Meter meter, Duration limit,
                                        Consumer<ConsumerRecord<byte[], byte[]>> handler) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Thread loop = new Thread(() -> {
            try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, group), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (!stop.get()) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    if (records.isEmpty()) {
                        continue;
                    }
                    meter.arrived();
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        handler.accept(record);
                    }
                    meter.handled(records.count());
                }
            }
        }, "bench-share-loop");
        loop.start();
        try {
            return meter.await(plan.shareMessages(), limit);
        } finally {
            stop.set(true);
            loop.join();
        }
    }

    /** Idem as users build it; the handler is counted as it ends. */
    private Meter.Measured withIdem(String topic, String group, Meter meter, Duration limit) throws Exception {
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> {
                    meter.arrived();
                    meter.handled(1);
                })
                .claims(RedisClaimStore.builder(redisson).keyPrefix("bench:" + group + ":").build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> {
                    throw new IllegalStateException("no dead letters expected");
                })
                .meterRegistry(new SimpleMeterRegistry());
        try (IdemKafkaShareConsumer<byte[]> consumer = IdemKafkaShareConsumer.builder(Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                        ConsumerConfig.GROUP_ID_CONFIG, group), processor)
                .topics(topic).build()) {
            consumer.start();
            return meter.await(plan.shareMessages(), limit);
        }
    }

    private void produce(String topic, int messages) {
        long started = System.nanoTime();
        OrderTopics.fill(kafka.bootstrapServers(), topic, messages);
        LOG.info("produced {} Kafka records for the share groups in {} ms", messages,
                (System.nanoTime() - started) / 1_000_000);
    }
}
