package dev.idem.benchmarks;

import dev.idem.core.IdempotentProcessor;
import dev.idem.redis.RedisClaimStore;
import dev.idem.core.DedupCheck;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.KafkaRecordProcessor;
import dev.idem.kafka.PollResult;
import dev.idem.testkit.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka: the same records consumed three times, by three groups, with one poll-loop skeleton
 * (poll, handle, commitSync per poll): raw, through Idem's {@link KafkaRecordProcessor} (what
 * {@code IdemKafkaConsumer} runs per poll), and through a naive per-message SET NX PX / SET wrapper.
 */
final class KafkaBench {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaBench.class);

    private final KafkaBroker kafka;
    private final RedissonClient redisson;
    private final RedisProbe probe;
    private final int messages;

    KafkaBench(KafkaBroker kafka, RedissonClient redisson, int messages) {
        this.kafka = kafka;
        this.redisson = redisson;
        this.probe = new RedisProbe(redisson);
        this.messages = messages;
    }

    /** Handles one poll; returns the offsets to commit. */
    private interface Step extends Function<ConsumerRecords<byte[], byte[]>, Map<TopicPartition, OffsetAndMetadata>> {
    }

    List<Result> run() {
        String topic = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopic(topic, 6);
        produce(topic);
        AtomicLong handled = new AtomicLong();

        Result raw = consume(topic, "raw", Set.of(), records -> {
            Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                handled.incrementAndGet();
                commits.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
            }
            return commits;
        });

        String prefix = "bench-" + UUID.randomUUID() + ":";
        IdempotentProcessor<byte[]> processor = IdempotentProcessor.<byte[]>builder(d -> handled.incrementAndGet())
                .group("bench-idem").claims(RedisClaimStore.builder(redisson).keyPrefix(prefix).build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(deadLetter -> { throw new IllegalStateException("no dead letters expected"); })
                .meterRegistry(new SimpleMeterRegistry()).build();
        KafkaRecordProcessor<byte[]> idem = KafkaRecordProcessor.of(processor);
        Result idemResult = consume(topic, "idem", Set.of("evalsha", "eval"), records -> {
            PollResult result = idem.process(records);
            if (!result.redeliveries().isEmpty()) {
                throw new IllegalStateException("unexpected redeliveries " + result.redeliveries());
            }
            return result.commits();
        });
        processor.close();

        Result naive = consume(topic, "naive", Set.of("set"), records -> {
            Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                RBucket<String> bucket = redisson.getBucket(prefix + "naive:" + new String(record.key(),
                        StandardCharsets.UTF_8), StringCodec.INSTANCE);
                if (bucket.setIfAbsent("claimed", Duration.ofSeconds(30))) {
                    handled.incrementAndGet();
                    bucket.set("done", Duration.ofDays(7));
                }
                commits.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
            }
            return commits;
        });
        return List.of(raw, idemResult, naive);
    }

    private void produce(String topic) {
        long started = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.LINGER_MS_CONFIG, 10, ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < messages; i++) {
                String key = String.format("order-%08d:deduct", i);
                producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), Payloads.order(i)));
            }
            producer.flush();
        }
        LOG.info("produced {} Kafka records of {} bytes in {} ms", messages, Payloads.order(0).length,
                (System.nanoTime() - started) / 1_000_000);
    }

    private Result consume(String topic, String variant, Set<String> clientCommands, Step step) {
        Latencies latencies = new Latencies(messages);
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-" + variant + "-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            Map<String, Long> before = probe.commandCalls();
            long started = 0;
            long stepNanos = 0;
            long commitNanos = 0;
            int consumed = 0;
            while (consumed < messages) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                long polled = System.nanoTime();
                if (started == 0) {
                    started = polled;
                }
                Map<TopicPartition, OffsetAndMetadata> commits = step.apply(records);
                long stepped = System.nanoTime();
                consumer.commitSync(commits);
                stepNanos += stepped - polled;
                commitNanos += System.nanoTime() - stepped;
                latencies.add(System.nanoTime() - polled, records.count());
                consumed += records.count();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            LOG.info("kafka {}: per record {} us handling, {} us committing, {} us in all", variant,
                    String.format("%.1f", stepNanos / 1e3 / consumed), String.format("%.1f", commitNanos / 1e3 / consumed),
                    String.format("%.1f", seconds * 1e6 / consumed));
            Map<String, Long> after = probe.commandCalls();
            Result result = new Result("kafka", variant, consumed, seconds,
                    RedisProbe.of(before, after, clientCommands) / (double) consumed,
                    RedisProbe.total(before, after) / (double) consumed,
                    latencies.percentileMillis(50), latencies.percentileMillis(99));
            LOG.info("kafka {}: {} records in {} s = {} records/s", variant, consumed, String.format("%.2f", seconds),
                    String.format("%.0f", result.perSecond()));
            return result;
        }
    }
}
