package dev.idem.kafka;

import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Publishes outbox rows to Kafka with an idempotent producer ({@code acks=all}): the row's key (UTF-8),
 * value and headers, plus {@link OutboxHeaders#MESSAGE_ID} and, when the sender was traced,
 * {@link OutboxHeaders#TRACE_PARENT}. Rows of one key go to one partition in the order given. A
 * destination topic that does not exist (asked of the cluster, then remembered while it exists; dead
 * once the row is older than {@code missingTopicGrace}), a record over the broker's size, an invalid
 * or forbidden topic are poison; a cluster that cannot be reached, or a send that timed out, is tried
 * again later, and a destination whose send failed at once is not sent to again in that batch. A
 * batch takes at most {@code timeout}. Used by one relay thread at a time.
 */
public final class KafkaOutboxPublisher implements OutboxPublisher {

    private final KafkaProducer<byte[], byte[]> producer;
    private final Admin admin;
    private final Duration timeout;
    private static final String MISSING = "destination topic ";

    private final Set<String> existing = ConcurrentHashMap.newKeySet();
    private final Duration missingTopicGrace;

    private KafkaOutboxPublisher(Builder b) {
        Map<String, Object> config = new HashMap<>(b.config);
        config.keySet().retainAll(ProducerConfig.configNames());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "idem-outbox");
        // Not a transactional producer: rows are marked in the database's transaction, not Kafka's.
        config.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        // Each batch is flushed at once (the relay waits for its acknowledgements): lingering only delays it.
        config.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
        long millis = b.timeout.toMillis();
        config.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) (millis / 2));
        config.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, millis);
        // Kafka refuses a delivery timeout under request timeout + linger.
        long request = Long.parseLong(config.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG).toString());
        long linger = Long.parseLong(config.get(ProducerConfig.LINGER_MS_CONFIG).toString());
        config.putIfAbsent(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(millis, request + linger));
        this.producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
        Map<String, Object> adminConfig = new HashMap<>(b.config);
        adminConfig.keySet().retainAll(AdminClientConfig.configNames());
        this.admin = Admin.create(adminConfig);
        this.timeout = b.timeout;
        this.missingTopicGrace = b.missingTopicGrace;
    }

    /**
     * A builder for a publisher connecting with {@code config} (at least {@code bootstrap.servers};
     * security and producer settings as your application has them).
     */
    public static Builder builder(Map<String, Object> config) {
        return new Builder(config);
    }

    @Override
    public List<Result> publish(List<OutboxRecord> records) throws InterruptedException {
        Result[] results = new Result[records.size()];
        Map<String, Result> refused;
        try {
            refused = refused(records);
        } catch (java.util.concurrent.TimeoutException | KafkaException e) {
            Result unreachable = new Retry("the Kafka cluster cannot be reached: " + describe(e));
            return java.util.Collections.nCopies(records.size(), unreachable);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        List<@Nullable Future<RecordMetadata>> sent = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            OutboxRecord record = records.get(i);
            Future<RecordMetadata> future = null;
            Result answer = answer(refused.get(record.destination()), record);
            if (answer != null) {
                results[i] = answer;
            } else if (System.nanoTime() - deadline > 0) {
                results[i] = new Retry("not sent: the batch ran out of its " + timeout.toMillis() + " ms");
            } else {
                try {
                    future = producer.send(recordOf(record));
                    if (future.isDone()) {
                        future.get();   // failed at once (e.g. no metadata within max.block.ms): surfaces below
                    }
                } catch (ExecutionException | KafkaException e) {
                    Throwable inner = e.getCause();
                    Throwable cause = e instanceof ExecutionException && inner != null ? inner : e;
                    results[i] = classify(record, cause);
                    // Its destination's other rows would wait as long: not sent this time.
                    refused.put(record.destination(), new Retry(describe(cause)));
                    future = null;
                }
            }
            sent.add(future);
        }
        producer.flush();
        for (int i = 0; i < records.size(); i++) {
            Future<RecordMetadata> future = sent.get(i);
            if (future == null) {
                continue;
            }
            try {
                future.get();
                results[i] = Published.INSTANCE;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                results[i] = classify(records.get(i), cause != null ? cause : e);
            }
        }
        return List.of(results);
    }

    /** What a record gets without being sent, given its destination's answer; null to send it. */
    private @Nullable Result answer(@Nullable Result destination, OutboxRecord record) {
        if (destination instanceof Poison missing && missing.reason().startsWith(MISSING)
                && Duration.between(record.createdAt(), Instant.now()).compareTo(missingTopicGrace) < 0) {
            // A deploy may be creating it: tried again until the grace is over.
            return new Retry(missing.reason() + " (yet: dead once the row is " + missingTopicGrace.toSeconds()
                    + " s old)");
        }
        return destination;
    }

    /**
     * The destinations of {@code records} the cluster refuses (does not have, calls invalid, or does
     * not let this client see), with their answer; those it has are remembered.
     */
    private Map<String, Result> refused(List<OutboxRecord> records)
            throws java.util.concurrent.TimeoutException, InterruptedException {
        Set<String> unknown = new LinkedHashSet<>();
        for (OutboxRecord record : records) {
            if (!existing.contains(record.destination())) {
                unknown.add(record.destination());
            }
        }
        Map<String, Result> refused = new HashMap<>();
        if (unknown.isEmpty()) {
            return refused;
        }
        var descriptions = admin.describeTopics(unknown).topicNameValues();
        for (String topic : unknown) {
            try {
                Objects.requireNonNull(descriptions.get(topic), topic).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                existing.add(topic);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof UnknownTopicOrPartitionException) {
                    refused.put(topic, new Poison(MISSING + topic + " does not exist"));
                } else if (cause instanceof InvalidTopicException || cause instanceof TopicAuthorizationException) {
                    refused.put(topic, new Poison(describe(cause)));
                } else {
                    refused.put(topic, new Retry("topic " + topic + " cannot be described: "
                            + describe(cause != null ? cause : e)));
                }
            }
        }
        return refused;
    }

    private Result classify(OutboxRecord record, Throwable failure) {
        if (failure instanceof RecordTooLargeException || failure instanceof RecordBatchTooLargeException
                || failure instanceof InvalidTopicException || failure instanceof TopicAuthorizationException) {
            return new Poison(describe(failure));
        }
        if (failure instanceof TimeoutException || failure instanceof UnknownTopicOrPartitionException) {
            // Deleted since it was seen, or the cluster is down: asked again next time.
            existing.remove(record.destination());
        }
        return new Retry(describe(failure));
    }

    private static String describe(Throwable failure) {
        return failure.getClass().getSimpleName() + ": " + failure.getMessage();
    }

    private static ProducerRecord<byte[], byte[]> recordOf(OutboxRecord row) {
        String key = row.key();
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(row.destination(), null,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8), row.value());
        row.headers().forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        record.headers().add(OutboxHeaders.MESSAGE_ID, row.id().getBytes(StandardCharsets.UTF_8));
        String traceParent = row.traceParent();
        if (traceParent != null) {
            record.headers().add(OutboxHeaders.TRACE_PARENT, traceParent.getBytes(StandardCharsets.UTF_8));
        }
        return record;
    }

    @Override
    public void close() {
        producer.close(timeout);
        admin.close(timeout);
    }

    /** Builds a {@link KafkaOutboxPublisher}. Not thread-safe. */
    public static final class Builder {

        private final Map<String, Object> config;
        private Duration timeout = Duration.ofSeconds(30);
        private Duration missingTopicGrace = Duration.ofMinutes(1);

        private Builder(Map<String, Object> config) {
            this.config = Map.copyOf(Objects.requireNonNull(config, "config"));
        }

        /**
         * How long a publication may take before it is tried again: the producer's delivery timeout,
         * and the longest a send waits for the cluster. Default 30 s.
         */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * How long after a row was written a destination topic that does not exist is waited for
         * (a deploy may be creating it) before the row goes to the dead state. Default 1 minute.
         */
        public Builder missingTopicGrace(Duration missingTopicGrace) {
            this.missingTopicGrace = missingTopicGrace;
            return this;
        }

        /**
         * Builds the publisher.
         *
         * @throws IllegalArgumentException if the timeout is not positive or there is no {@code bootstrap.servers}
         */
        public KafkaOutboxPublisher build() {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be > 0 but was " + timeout);
            }
            if (missingTopicGrace == null || missingTopicGrace.isNegative()) {
                throw new IllegalArgumentException("missingTopicGrace must be >= 0 but was " + missingTopicGrace);
            }
            if (!config.containsKey(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
                throw new IllegalArgumentException("config must have bootstrap.servers");
            }
            return new KafkaOutboxPublisher(this);
        }
    }
}
