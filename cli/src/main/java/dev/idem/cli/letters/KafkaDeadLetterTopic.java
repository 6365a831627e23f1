package dev.idem.cli.letters;

import dev.idem.cli.CliException;
import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Kafka dead-letter topics. A scan assigns every partition (no consumer group, nothing committed),
 * reads from the beginning to the end offsets taken at the start with large fetches, and decodes
 * headers only. Entries are {@code <partition>:<offset>}. Resent records go to their original
 * partition (where the topic still has it) with an idempotent {@code acks=all} producer.
 */
public final class KafkaDeadLetterTopic implements DeadLetterTopic {

    // Long enough for a busy broker, short enough that an unreachable one is reported quickly.
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    // A scan that reads nothing for this long while records remain is reported, not waited on.
    private static final Duration STALL = Duration.ofSeconds(30);

    private final String bootstrap;
    private final Map<String, Object> config;
    private final Admin admin;
    private final Map<String, Integer> partitionCounts = new ConcurrentHashMap<>();
    private volatile @Nullable KafkaProducer<byte[], byte[]> producer;

    /**
     * Connects to {@code bootstrap} with extra client settings (TLS, SASL).
     *
     * @throws CliException if a client setting is not one of Kafka's (a typo would otherwise be dropped
     *                      silently and surface as an unreachable broker)
     */
    public KafkaDeadLetterTopic(String bootstrap, Map<String, String> clientSettings) {
        checkClientSettings(clientSettings);
        this.bootstrap = bootstrap;
        Map<String, Object> config = new HashMap<>(clientSettings);
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "idem-cli");
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis() / 2);
        this.config = Map.copyOf(config);
        Map<String, Object> adminConfig = new HashMap<>(config);
        adminConfig.keySet().retainAll(AdminClientConfig.configNames());
        this.admin = Admin.create(adminConfig);
    }

    /**
     * Refuses a profile's {@code kafka.<name>} that no Kafka client (admin, consumer, producer) knows.
     *
     * @throws CliException naming the first unknown setting
     */
    public static void checkClientSettings(Map<String, String> clientSettings) {
        for (String name : clientSettings.keySet()) {
            if (!AdminClientConfig.configNames().contains(name) && !ConsumerConfig.configNames().contains(name)
                    && !ProducerConfig.configNames().contains(name)) {
                throw new CliException("kafka." + name + " in the profile file is not a Kafka client setting");
            }
        }
    }

    @Override
    public String broker() {
        return "kafka";
    }

    @Override
    public String entry(String text) {
        return parseEntry(text);
    }

    /** Checks and normalizes a Kafka entry without a connection; throws a {@link CliException} if wrong. */
    public static String parseEntry(String text) {
        String[] parts = text.split(":");
        if (parts.length != 2 || !parts[0].matches("\\d+") || !parts[1].matches("\\d+")) {
            throw new CliException("a Kafka entry is <partition>:<offset>, e.g. 0:17, not '" + text + "'");
        }
        try {
            return Integer.parseInt(parts[0]) + ":" + Long.parseLong(parts[1]);
        } catch (NumberFormatException e) {
            throw new CliException("a Kafka entry is <partition>:<offset>, e.g. 0:17, not '" + text + "' (too large)", e);
        }
    }

    @Override
    public Scan scan(String topic, LetterFilter filter) {
        long started = System.nanoTime();
        List<TopicPartition> partitions = partitions(topic);
        List<Letter> letters = new ArrayList<>();
        long scanned = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, TIMEOUT);
            List<TopicPartition> open = new ArrayList<>(partitions);
            long lastProgress = System.nanoTime();
            while (true) {
                open.removeIf(p -> consumer.position(p, TIMEOUT) >= ends.getOrDefault(p, 0L));
                if (open.isEmpty()) {
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    TopicPartition partition = new TopicPartition(record.topic(), record.partition());
                    if (record.offset() >= ends.getOrDefault(partition, 0L)) {
                        continue;
                    }
                    scanned++;
                    Letter letter = letter(record, false);
                    if (filter.matches(letter)) {
                        letters.add(letter);
                    }
                }
                if (!records.isEmpty()) {
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                    throw new CliException("scanning " + topic + " stalled: nothing read for " + STALL.toSeconds()
                            + " s from " + bootstrap);
                }
            }
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            throw new CliException("cannot read " + topic + " from Kafka at " + bootstrap + ": " + e.getMessage(), e);
        }
        letters.sort(KafkaDeadLetterTopic::byPosition);
        return new Scan(letters, scanned, (System.nanoTime() - started) / 1_000_000);
    }

    private static int byPosition(Letter a, Letter b) {
        String[] x = a.entry().split(":");
        String[] y = b.entry().split(":");
        int partition = Integer.compare(Integer.parseInt(x[0]), Integer.parseInt(y[0]));
        return partition != 0 ? partition : Long.compare(Long.parseLong(x[1]), Long.parseLong(y[1]));
    }

    @Override
    public Optional<Letter> read(String topic, String entry) {
        String[] parts = entry(entry).split(":");
        int partitionNumber = Integer.parseInt(parts[0]);
        long offset = Long.parseLong(parts[1]);
        if (partitionNumber >= partitions(topic).size()) {
            return Optional.empty();
        }
        TopicPartition partition = new TopicPartition(topic, partitionNumber);
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            consumer.assign(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), TIMEOUT).getOrDefault(partition, 0L);
            long begin = consumer.beginningOffsets(List.of(partition), TIMEOUT).getOrDefault(partition, 0L);
            if (offset < begin || offset >= end) {
                return Optional.empty();
            }
            consumer.seek(partition, offset);
            long deadline = System.nanoTime() + STALL.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    if (record.offset() == offset) {
                        return Optional.of(letter(record, true));
                    }
                    if (record.offset() > offset) {
                        return Optional.empty();
                    }
                }
            }
            throw new CliException("could not read " + topic + " " + entry + " from " + bootstrap + " within "
                    + STALL.toSeconds() + " s");
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            throw new CliException("cannot read " + topic + " from Kafka at " + bootstrap + ": " + e.getMessage(), e);
        }
    }

    private static Letter letter(ConsumerRecord<byte[], byte[]> record, boolean full) {
        List<Letter.Header> headers = new ArrayList<>();
        Map<String, String> idem = new LinkedHashMap<>();
        for (org.apache.kafka.common.header.Header header : record.headers()) {
            String name = header.key();
            if (DeadLetterHeaders.isIdemHeader(name)) {
                if (header.value() != null) {
                    idem.put(name, new String(header.value(), StandardCharsets.UTF_8));
                }
            } else {
                headers.add(new Letter.Header(name, header.value()));
            }
        }
        return new Letter(record.partition() + ":" + record.offset(), record.key(), record.value(), headers,
                Letter.idemHeaders(idem, full),
                null, null, record.timestamp() < 0 ? null : Instant.ofEpochMilli(record.timestamp()));
    }

    private KafkaConsumer<byte[], byte[]> consumer() {
        Map<String, Object> settings = new HashMap<>(config);
        settings.keySet().retainAll(ConsumerConfig.configNames());
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        settings.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        settings.remove(ConsumerConfig.GROUP_ID_CONFIG);
        // Large fetches: a dead letter carries a few KB of headers (the stack trace), and a scan
        // reads every one of them; the defaults (500 records, 1 MB per partition) cost round trips.
        settings.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        settings.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 * 1024 * 1024);
        settings.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 * 1024 * 1024);
        settings.put(ConsumerConfig.RECEIVE_BUFFER_CONFIG, 4 * 1024 * 1024);
        return new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** The topic's partitions, or a one-line error for an unknown topic or an unreachable broker. */
    private List<TopicPartition> partitions(String topic) {
        return describe(topic).map(d -> d.partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList())
                .orElseThrow(() -> new CliException("topic " + topic + " does not exist on Kafka at " + bootstrap));
    }

    private Optional<TopicDescription> describe(String topic) {
        try {
            return Optional.ofNullable(admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw unreachable(e.getCause());
        } catch (TimeoutException e) {
            throw unreachable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("interrupted", e);
        }
    }

    private CliException unreachable(@Nullable Throwable cause) {
        String detail = cause instanceof org.apache.kafka.common.errors.TimeoutException
                || cause instanceof TimeoutException ? "no answer within " + TIMEOUT.toSeconds() + " s" : String.valueOf(cause);
        return new CliException("cannot reach Kafka at " + bootstrap + " (" + detail + ")", cause);
    }

    @Override
    public CompletableFuture<String> resend(Letter letter) {
        String topic = letter.originalTopic();
        CompletableFuture<String> sent = new CompletableFuture<>();
        int partitions;
        try {
            partitions = partitionCounts.computeIfAbsent(topic, t -> describe(t).map(d -> d.partitions().size())
                    .orElseThrow(() -> new CliException("original topic " + t + " does not exist")));
        } catch (CliException e) {
            sent.completeExceptionally(e);
            return sent;
        }
        // The original partition where the topic still has it, so the key's order is kept.
        Integer partition = letter.originalPartition() >= 0 && letter.originalPartition() < partitions
                ? letter.originalPartition() : null;
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, letter.key(), letter.value());
        letter.replayHeaders().forEach(h -> record.headers().add(new RecordHeader(h.name(), h.value())));
        producer().send(record, (metadata, failure) -> {
            if (failure != null) {
                sent.completeExceptionally(failure);
            } else {
                sent.complete(metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset());
            }
        });
        return sent;
    }

    private KafkaProducer<byte[], byte[]> producer() {
        KafkaProducer<byte[], byte[]> current = producer;
        if (current == null) {
            synchronized (this) {
                if (producer == null) {
                    Map<String, Object> settings = new HashMap<>(config);
                    settings.keySet().retainAll(ProducerConfig.configNames());
                    settings.put(ProducerConfig.ACKS_CONFIG, "all");
                    settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
                    settings.put(ProducerConfig.LINGER_MS_CONFIG, 5);
                    settings.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
                    settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TIMEOUT.toMillis());
                    producer = new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
                }
                current = producer;
            }
        }
        return current;
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.close(TIMEOUT);
        }
        admin.close(TIMEOUT);
    }
}
