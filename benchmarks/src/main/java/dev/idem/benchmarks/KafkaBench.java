package dev.idem.benchmarks;

import dev.idem.core.ConsumerState;
import dev.idem.core.DedupCheck;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.KafkaBroker;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
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
 * Kafka: one topic consumed from its beginning by a new group per variant and round. {@code raw}
 * and {@code naive} (a per-message SET NX PX / SET wrapper) share one poll loop (poll, handle,
 * commitSync); {@code idem} is an {@link IdemKafkaConsumer} as users build it, with the Redis
 * claim store and no business check. Then the added latency at a steady rate.
 */
final class KafkaBench {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaBench.class);
    private static final int PARTITIONS = 6;

    private final KafkaBroker kafka;
    private final RedissonClient redisson;
    private final RedisProbe probe;
    private final Plan plan;
    // Where the Camel peer connects; null where it does not run (the remote rounds).
    private final URI redis;

    KafkaBench(KafkaBroker kafka, RedissonClient redisson, Plan plan, URI redis) {
        this.kafka = kafka;
        this.redisson = redisson;
        this.redis = redis;
        this.probe = new RedisProbe(redisson);
        this.plan = plan;
    }

    /**
     * The warm-up round, then {@code plan.rounds()} rounds of raw, idem, idem-traced (Idem with the
     * OpenTelemetry SDK, every span sampled, exported to nothing), camel (Camel's idempotent consumer
     * with its Redis repository, {@link CamelPeer}) and naive; warm-up not returned.
     */
    List<Result> throughput() throws Exception {
        return throughput("kafka", List.of("raw", "idem", "idem-traced", "camel", "naive"));
    }

    /** Raw, idem and naive with this bench's Redis client behind a {@link DelayProxy}: broker {@code kafka-remote}. */
    List<Result> remoteThroughput() throws Exception {
        return throughput("kafka-remote", List.of("raw", "idem", "naive"));
    }

    private List<Result> throughput(String label, List<String> variants) throws Exception {
        String topic = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopic(topic, PARTITIONS);
        produce(topic, plan.kafkaMessages());
        return Rounds.run(label, plan, probe, variants, (variant, group, limit) -> run(topic, variant, group, limit));
    }

    private Meter.Measured run(String topic, String variant, String group, Duration limit) throws Exception {
        Meter meter = new Meter();
        switch (variant) {
            case "raw" -> {
                return withPollLoop(topic, group, meter, limit, record -> { });
            }
            case "naive" -> {
                String prefix = group + ":";
                return withPollLoop(topic, group, meter, limit, record -> {
                    RBucket<String> bucket = redisson.getBucket(prefix + new String(record.key(), StandardCharsets.UTF_8),
                            StringCodec.INSTANCE);
                    if (bucket.setIfAbsent("claimed", Duration.ofSeconds(30))) {
                        bucket.set("done", Duration.ofDays(7));
                    }
                });
            }
            case "idem" -> {
                return withIdem(topic, group, meter, limit, delivery -> { });
            }
            case "camel" -> {
                return CamelPeer.consume(kafka.bootstrapServers(), topic, group, redis, meter, plan.kafkaMessages(), limit);
            }
            case "idem-traced" -> {
                try (OpenTelemetrySdk otel = Tracers.exportingNowhere()) {
                    return withIdem(topic, group, meter, limit, () -> { }, plan.kafkaMessages(), delivery -> { }, otel);
                }
            }
            default -> throw new IllegalArgumentException(variant);
        }
    }

    /**
     * Raw and idem at {@code plan.steadyRate()} messages per second, after a warm-up of
     * {@link Steady#WARM_UP} messages that are not measured.
     */
    List<Latency> latency() throws Exception {
        List<Latency> latencies = new ArrayList<>();
        for (String variant : List.of("raw", "idem")) {
            String topic = "steady-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
            kafka.createTopic(topic, PARTITIONS);
            String group = "steady-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
            Steady steady = new Steady(plan);
            Runnable send = () -> steady.send((i, timed) -> producer(topic).accept(i, timed));
            if (variant.equals("raw")) {
                withPollLoop(topic, group, steady.meter(), steady.limit(), send, steady.total(),
                        record -> steady.handled(record.value()));
            } else {
                withIdem(topic, group, steady.meter(), steady.limit(), send, steady.total(),
                        delivery -> steady.handled(delivery.payload()), null);
            }
            Latency latency = steady.summary("kafka", variant);
            LOG.info("kafka steady {}: {}", variant, latency);
            latencies.add(latency);
            probe.forget("bench:" + group + ":*");
            closeProducer();
        }
        return latencies;
    }

    private Meter.Measured withPollLoop(String topic, String group, Meter meter, Duration limit,
                                        Consumer<ConsumerRecord<byte[], byte[]>> handler) throws Exception {
        return withPollLoop(topic, group, meter, limit, () -> { }, plan.kafkaMessages(), handler);
    }

    /** Raw and naive: poll, handle each record, commitSync, on a thread of its own. */
    private Meter.Measured withPollLoop(String topic, String group, Meter meter, Duration limit, Runnable produce,
                                        int messages, Consumer<ConsumerRecord<byte[], byte[]>> handler)
            throws Exception {
        Map<String, Object> config = consumerConfig(group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch joined = new CountDownLatch(1);
        Thread loop = new Thread(() -> {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (!stop.get()) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    if (!consumer.assignment().isEmpty()) {
                        joined.countDown();
                    }
                    if (records.isEmpty()) {
                        continue;
                    }
                    meter.arrived();
                    Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        handler.accept(record);
                        commits.put(new TopicPartition(record.topic(), record.partition()),
                                new OffsetAndMetadata(record.offset() + 1));
                    }
                    consumer.commitSync(commits);
                    meter.handled(records.count());
                }
            }
        }, "bench-poll-loop");
        loop.start();
        try {
            if (!joined.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the poll loop did not join its group");
            }
            produce.run();
            return meter.await(messages, limit);
        } finally {
            stop.set(true);
            loop.join();
        }
    }

    private Meter.Measured withIdem(String topic, String group, Meter meter, Duration limit,
                                    DeliveryHandler<byte[]> handler) throws Exception {
        return withIdem(topic, group, meter, limit, () -> { }, plan.kafkaMessages(), handler, null);
    }

    /** Idem as users build it; the handler is counted as it ends. */
    private Meter.Measured withIdem(String topic, String group, Meter meter, Duration limit, Runnable produce,
                                    int messages, DeliveryHandler<byte[]> handler, OpenTelemetrySdk otel) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> {
                    meter.arrived();
                    handler.handle(delivery);
                    meter.handled(1);
                })
                .claims(RedisClaimStore.builder(redisson).keyPrefix("bench:" + group + ":").build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> {
                    throw new IllegalStateException("no dead letters expected");
                })
                .meterRegistry(registry);
        if (otel != null) {
            processor.openTelemetry(otel);
        }
        try (IdemKafkaConsumer<byte[]> consumer = IdemKafkaConsumer.builder(consumerConfig(group), processor)
                .topics(topic).build()) {
            consumer.start();
            long waiting = System.nanoTime();
            while (consumer.state() != ConsumerState.RUNNING) {
                if (System.nanoTime() - waiting > Duration.ofSeconds(60).toNanos()) {
                    throw new IllegalStateException("Idem's consumer did not join its group", consumer.failure());
                }
                Thread.sleep(10);
            }
            produce.run();
            long started = System.nanoTime();
            Meter.Measured measured = meter.await(messages, limit);
            // Where a poll's time goes: the share spent waiting for claims bounds what overlapping
            // them with processing could win (throughput runs only: a steady run waits for its sends).
            Timer claims = registry.get("idem.claim").timer();
            if (messages == plan.kafkaMessages()) {
                LOG.info("idem: {} claim calls, mean {} ms, {}% of the run", claims.count(),
                        String.format(Locale.ROOT, "%.2f", claims.mean(TimeUnit.MILLISECONDS)),
                        Math.round(100 * claims.totalTime(TimeUnit.NANOSECONDS) / (System.nanoTime() - started)));
            }
            return measured;
        }
    }

    private Map<String, Object> consumerConfig(String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return config;
    }

    private void produce(String topic, int messages) {
        long started = System.nanoTime();
        OrderTopics.fill(kafka.bootstrapServers(), topic, messages);
        LOG.info("produced {} Kafka records of {} bytes in {} ms", messages, Payloads.order(0).length,
                (System.nanoTime() - started) / 1_000_000);
    }

    private KafkaProducer<byte[], byte[]> steadyProducer;

    /** Sends one timed message at once (no linger), for the steady runs. */
    private java.util.function.BiConsumer<Integer, byte[]> producer(String topic) {
        if (steadyProducer == null) {
            steadyProducer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 0), new ByteArraySerializer(),
                    new ByteArraySerializer());
        }
        return (i, timed) -> steadyProducer.send(new ProducerRecord<>(topic,
                String.format("steady-%08d", i).getBytes(StandardCharsets.UTF_8), timed));
    }

    private void closeProducer() {
        if (steadyProducer != null) {
            steadyProducer.close();
            steadyProducer = null;
        }
    }
}
