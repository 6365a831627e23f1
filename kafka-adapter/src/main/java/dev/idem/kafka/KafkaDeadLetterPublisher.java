package dev.idem.kafka;

import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.spi.DeadLetterPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes dead letters to Kafka, {@code <topic>.DLT} by default: the original record's key, value
 * (a tombstone stays a tombstone) and headers copied byte for byte from the {@code ConsumerRecord}
 * (repeated headers and null values kept, earlier {@code idem-} headers dropped), then Idem's
 * {@code idem-} headers. {@link #publish} returns only
 * once the broker acknowledged the record ({@code acks=all}, idempotent producer). A missing
 * dead-letter topic is created with the source topic's partition count, unless creation is
 * disabled. Thread-safe.
 */
public final class KafkaDeadLetterPublisher implements DeadLetterPublisher, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaDeadLetterPublisher.class);

    private final KafkaProducer<byte[], byte[]> producer;
    private final Admin admin;
    private final DeadLetterRouting routing;
    private final boolean createTopics;
    private final Duration timeout;
    private final Map<String, Integer> partitionCounts = new ConcurrentHashMap<>();

    private KafkaDeadLetterPublisher(Builder b) {
        Map<String, Object> config = new HashMap<>(b.config);
        config.keySet().retainAll(ProducerConfig.configNames());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "idem-dead-letters");
        this.producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
        Map<String, Object> adminConfig = new HashMap<>(b.config);
        adminConfig.keySet().retainAll(org.apache.kafka.clients.admin.AdminClientConfig.configNames());
        this.admin = Admin.create(adminConfig);
        this.routing = b.routing;
        this.createTopics = b.createTopics;
        this.timeout = b.timeout;
    }

    /**
     * A builder for a publisher connecting with {@code config} (at least {@code bootstrap.servers};
     * security settings as your consumer has them).
     */
    public static Builder builder(Map<String, Object> config) {
        return new Builder(config);
    }

    @Override
    public void publish(DeadLetter deadLetter) throws Exception {
        String source = deadLetter.envelope().topic();
        String topic = routing.deadLetterTopic(source);
        int partitions = partitions(topic, source);
        // Same partition as the original where the dead-letter topic has it, so order per key survives.
        Integer partition = deadLetter.envelope().partition() >= 0 && deadLetter.envelope().partition() < partitions
                ? deadLetter.envelope().partition() : null;
        ProducerRecord<byte[], byte[]> record = deadLetter.envelope().source(ConsumerRecord.class)
                .map(original -> copyOf(original, topic, partition))
                .orElseGet(() -> fromEnvelope(deadLetter, topic, partition));
        // Idem's headers last, once: earlier idem- headers were left out of the copy above.
        deadLetter.idemHeaders().forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        producer.send(record).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The original record as it was: key, value (a tombstone stays null) and every header byte for
     * byte, repeated ones and null values included, except earlier {@code idem-} headers.
     */
    private static ProducerRecord<byte[], byte[]> copyOf(ConsumerRecord<?, ?> source, String topic, @Nullable Integer partition) {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, bytes(source.key(), "key"),
                bytes(source.value(), "value"));
        for (Header header : source.headers()) {
            if (!DeadLetterHeaders.isIdemHeader(header.key())) {
                record.headers().add(header.key(), header.value());
            }
        }
        return record;
    }

    private static byte[] bytes(Object part, String name) {
        if (part == null || part instanceof byte[]) {
            return (byte[]) part;
        }
        throw new IllegalStateException("record " + name + " must be bytes (ByteArrayDeserializer) but was a "
                + part.getClass().getName());
    }

    /** A message that did not come from a Kafka consumer (a hand-made envelope): its text headers. */
    private static ProducerRecord<byte[], byte[]> fromEnvelope(DeadLetter deadLetter, String topic, @Nullable Integer partition) {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition,
                deadLetter.envelope().messageKey(), deadLetter.envelope().body());
        deadLetter.headers().forEach((name, value) -> {
            if (!DeadLetterHeaders.isIdemHeader(name)) {
                record.headers().add(name, value.getBytes(StandardCharsets.UTF_8));
            }
        });
        return record;
    }

    private int partitions(String topic, String source) throws Exception {
        Integer known = partitionCounts.get(topic);
        if (known != null) {
            return known;
        }
        Optional<Integer> existing = describe(topic);
        if (existing.isEmpty()) {
            if (!createTopics) {
                throw new IllegalStateException("dead-letter topic " + topic + " does not exist and topic creation "
                        + "is disabled (createTopics(false)); create it with as many partitions as " + source);
            }
            int sourcePartitions = describe(source).orElse(1);
            try {
                admin.createTopics(List.of(new NewTopic(topic, Optional.of(sourcePartitions), Optional.empty())))
                        .all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                LOG.info("created dead-letter topic {} with {} partition(s), like {}", topic, sourcePartitions, source);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            existing = Optional.of(sourcePartitions);
        }
        partitionCounts.put(topic, existing.get());
        return existing.get();
    }

    private Optional<Integer> describe(String topic) throws Exception {
        try {
            // allTopicNames fails for a topic it does not know, so the description is there.
            TopicDescription description = Objects.requireNonNull(admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(topic), topic);
            return Optional.of(description.partitions().size());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public void close() {
        producer.close(timeout);
        admin.close(timeout);
    }

    /** Builds a {@link KafkaDeadLetterPublisher}. Not thread-safe. */
    public static final class Builder {

        private final Map<String, Object> config;
        private DeadLetterRouting routing = DeadLetterRouting.KAFKA_DEFAULT;
        private boolean createTopics = true;
        // Long enough for a broker fail-over; the source stays unacknowledged until then.
        private Duration timeout = Duration.ofSeconds(30);

        private Builder(Map<String, Object> config) {
            this.config = Map.copyOf(Objects.requireNonNull(config, "config"));
        }

        /** Where dead letters go. Default: {@code <topic>.DLT}. */
        public Builder routing(DeadLetterRouting routing) {
            this.routing = routing;
            return this;
        }

        /** Whether missing dead-letter topics are created. Default true. */
        public Builder createTopics(boolean createTopics) {
            this.createTopics = createTopics;
            return this;
        }

        /** How long to wait for the broker's acknowledgement. Default 30 s. */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** @throws IllegalArgumentException naming a missing or wrong setting */
        public KafkaDeadLetterPublisher build() {
            if (!config.containsKey(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
                throw new IllegalArgumentException("bootstrap.servers is required for the dead-letter producer");
            }
            Objects.requireNonNull(routing, "routing");
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be > 0 but was " + timeout);
            }
            return new KafkaDeadLetterPublisher(this);
        }
    }
}
