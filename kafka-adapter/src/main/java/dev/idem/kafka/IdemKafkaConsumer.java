package dev.idem.kafka;

import dev.idem.core.IdempotentProcessor;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka consumer that applies each record's effect once (DESIGN §5). It owns the poll loop for a
 * group: each poll's keys are claimed in one round trip, partitions are processed in parallel and
 * each in offset order, only offsets of finished records are committed, and a record that must be
 * redelivered makes its partition seek back and pause for the backoff while the others go on.
 *
 * <pre>{@code
 * IdemKafkaConsumer<Order> consumer = IdemKafkaConsumer.builder(consumerConfig, processorBuilder)
 *     .topics("orders").concurrency(4).build();
 * consumer.start();
 * ...
 * consumer.close();   // finishes current records, commits, releases unstarted claims
 * }</pre>
 *
 * <p>Thread-safe: start and close from any thread; records are handled on Idem's threads.
 *
 * @param <T> payload type
 */
public final class IdemKafkaConsumer<T> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(IdemKafkaConsumer.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    // Poll at least this often so paused partitions resume close to their deadline.
    private static final Duration MAX_POLL_WAIT = Duration.ofMillis(100);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final IdempotentProcessor<T> processor;
    private final KafkaDeadLetterPublisher deadLetters;
    private final KafkaRecordProcessor<T> records;
    private final ExecutorService workers;
    private final List<String> topics;
    private final Thread pollThread;
    private final Map<TopicPartition, Instant> pausedUntil = new HashMap<>();
    private volatile boolean running;
    private volatile Throwable crash;

    private IdemKafkaConsumer(Builder<T> b, Map<String, Object> consumerConfig) {
        this.deadLetters = b.deadLetters != null ? b.deadLetters : KafkaDeadLetterPublisher.builder(b.config).build();
        try {
            this.processor = b.processor.group((String) consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG))
                    .deadLetters(deadLetters).build();
        } catch (RuntimeException e) {
            deadLetters.close();
            throw e;
        }
        this.topics = List.copyOf(b.topics);
        this.consumer = new KafkaConsumer<>(consumerConfig, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        int id = INSTANCES.incrementAndGet();
        this.workers = b.concurrency == 1 ? null : Executors.newFixedThreadPool(b.concurrency, task -> {
            Thread thread = new Thread(task, "idem-kafka-" + id + "-worker");
            thread.setDaemon(true);
            return thread;
        });
        this.records = workers == null ? KafkaRecordProcessor.of(processor) : KafkaRecordProcessor.of(processor, workers);
        this.pollThread = new Thread(this::pollLoop, "idem-kafka-" + id + "-poll");
    }

    /**
     * A builder over Kafka consumer settings (at least {@code bootstrap.servers} and
     * {@code group.id}) and a processor builder whose group and dead letters the consumer fills in.
     */
    public static <T> Builder<T> builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
        return new Builder<>(config, processor);
    }

    /**
     * Subscribes and starts polling on Idem's own thread.
     *
     * @throws IllegalStateException if already started
     */
    public synchronized void start() {
        if (running || pollThread.isAlive()) {
            throw new IllegalStateException("consumer already started");
        }
        running = true;
        pollThread.start();
    }

    /** The error that stopped the poll loop, if one did. */
    public Throwable failure() {
        return crash;
    }

    /** Whether the poll loop is running. */
    public boolean isRunning() {
        return pollThread.isAlive();
    }

    private void pollLoop() {
        boolean crashed = false;
        try {
            consumer.subscribe(topics, new Rebalance());
            while (running) {
                resumeDue();
                ConsumerRecords<byte[], byte[]> polled = consumer.poll(MAX_POLL_WAIT);
                if (polled.isEmpty()) {
                    continue;
                }
                PollResult result = records.process(polled, () -> !running);
                if (!result.commits().isEmpty()) {
                    consumer.commitSync(result.commits());
                }
                result.redeliveries().forEach((partition, redelivery) -> {
                    consumer.seek(partition, redelivery.offset());
                    consumer.pause(List.of(partition));
                    pausedUntil.put(partition, Instant.now().plus(redelivery.delay()));
                });
            }
        } catch (WakeupException e) {
            if (running) {
                crash = e;
                LOG.error("Kafka consumer for {} woken up unexpectedly; stopping", topics, e);
            }
        } catch (Error e) {
            // Like a crashed process: no commit, no release; the claims expire and are taken over.
            crashed = true;
            crash = e;
            LOG.error("Kafka consumer for {} stopped by an error; uncommitted records will be redelivered", topics, e);
        } catch (RuntimeException e) {
            crash = e;
            LOG.error("Kafka consumer for {} failed; stopping", topics, e);
        } finally {
            running = false;
            consumer.close(crashed ? Duration.ZERO : CLOSE_TIMEOUT);
        }
    }

    private void resumeDue() {
        if (pausedUntil.isEmpty()) {
            return;
        }
        Instant now = Instant.now();
        List<TopicPartition> due = new ArrayList<>();
        pausedUntil.entrySet().removeIf(entry -> {
            if (entry.getValue().isAfter(now)) {
                return false;
            }
            due.add(entry.getKey());
            return true;
        });
        due.retainAll(consumer.assignment());
        if (!due.isEmpty()) {
            consumer.resume(due);
        }
    }

    /** Offsets are committed after every poll, so a revocation only forgets pause deadlines. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            partitions.forEach(pausedUntil::remove);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            LOG.info("assigned {}", partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            partitions.forEach(pausedUntil::remove);
        }
    }

    /**
     * Stops after the records in progress: commits what finished, releases claims of records not
     * started, closes the Kafka consumer and the dead-letter producer.
     */
    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            pollThread.join(CLOSE_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (workers != null) {
            workers.shutdown();
            try {
                workers.awaitTermination(CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        processor.close();
        deadLetters.close();
    }

    /**
     * Builds an {@link IdemKafkaConsumer}; {@link #build()} validates the settings and fails naming
     * the one that is missing or wrong. Not thread-safe.
     *
     * @param <T> payload type
     */
    public static final class Builder<T> {

        private final Map<String, Object> config;
        private final IdempotentProcessor.Builder<T> processor;
        private final List<String> topics = new ArrayList<>();
        private KafkaDeadLetterPublisher deadLetters;
        private int concurrency = 1;

        private Builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
            this.config = new HashMap<>(Objects.requireNonNull(config, "config"));
            this.processor = Objects.requireNonNull(processor, "processor");
        }

        /** Topics to subscribe to. Required. */
        public Builder<T> topics(String... topics) {
            this.topics.addAll(List.of(topics));
            return this;
        }

        /** How many partitions are processed at once (order is kept within each). Default 1. */
        public Builder<T> concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /**
         * The dead-letter publisher. Default: {@code <topic>.DLT} on the same cluster, created when
         * missing. The consumer closes it.
         */
        public Builder<T> deadLetters(KafkaDeadLetterPublisher deadLetters) {
            this.deadLetters = deadLetters;
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the setting that is missing or wrong
         */
        public IdemKafkaConsumer<T> build() {
            require(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG);
            require(ConsumerConfig.GROUP_ID_CONFIG);
            if (topics.isEmpty() || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
                throw new IllegalArgumentException("topics must name at least one topic but were " + topics);
            }
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be >= 1 but was " + concurrency);
            }
            Object autoCommit = config.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
            if (autoCommit != null && Boolean.parseBoolean(autoCommit.toString())) {
                throw new IllegalArgumentException("enable.auto.commit must be false but was " + autoCommit
                        + ": Idem commits only offsets of finished records");
            }
            for (String deserializer : List.of(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG)) {
                Object value = config.get(deserializer);
                if (value != null && !value.toString().contains(ByteArrayDeserializer.class.getSimpleName())) {
                    throw new IllegalArgumentException(deserializer + " must be unset or ByteArrayDeserializer but was "
                            + value + ": Idem reads bytes and decodes them with the processor's codec");
                }
            }
            Map<String, Object> consumerConfig = new HashMap<>(config);
            consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            consumerConfig.keySet().retainAll(ConsumerConfig.configNames());
            consumerConfig.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
            consumerConfig.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
            long maxPollInterval = Long.parseLong(String.valueOf(config.getOrDefault(
                    ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 300_000)));
            Duration lease = processor.lease();
            if (lease.toMillis() >= maxPollInterval) {
                throw new IllegalArgumentException("lease (" + lease + ") must be shorter than max.poll.interval.ms ("
                        + maxPollInterval + " ms): a consumer that misses its poll is replaced, and its claims "
                        + "must expire before the new owner gives up on them");
            }
            return new IdemKafkaConsumer<>(this, consumerConfig);
        }

        private void require(String name) {
            Object value = config.get(name);
            if (value == null || value.toString().isBlank()) {
                throw new IllegalArgumentException(name + " is required in the consumer settings");
            }
        }
    }
}
