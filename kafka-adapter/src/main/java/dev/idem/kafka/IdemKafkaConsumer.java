package dev.idem.kafka;

import dev.idem.core.ConsumerState;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.ProcessorComposer;
import dev.idem.kafka.internal.ConsumerLifecycle;
import dev.idem.kafka.internal.ConsumerSettings;
import dev.idem.kafka.internal.KafkaClients;
import dev.idem.kafka.internal.KafkaConsumerConfig;
import dev.idem.kafka.internal.KafkaProcessors;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka consumer that applies each record's effect once. It owns the poll loop for a group: each
 * poll's keys are claimed in one round trip, partitions are processed in parallel and each in
 * offset order, only offsets of finished records are committed, and a record that must be
 * redelivered makes its partition seek back and pause for the backoff while the others go on.
 * Records run on Idem's threads while the poll thread keeps polling, so a long batch does not cost
 * the group membership (decision 0010). Handlers reach the Kafka record through
 * {@code delivery.envelope().source(ConsumerRecord.class)}.
 *
 * <pre>{@code
 * IdemKafkaConsumer<Order> consumer = IdemKafkaConsumer.builder(consumerConfig, processorBuilder)
 *     .topics("orders").concurrency(4).onFailure(failure -> alert(failure)).build();
 * consumer.start();
 * ...
 * consumer.close();   // stops taking records, finishes or releases them, commits, then closes the rest
 * }</pre>
 *
 * <p>Thread-safe: start, close and read the state from any thread.
 *
 * @param <T> payload type
 */
public final class IdemKafkaConsumer<T> implements IdemConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(IdemKafkaConsumer.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ExecutorService claims;
    private final ExecutorService batches;
    private final @Nullable ExecutorService workers;
    private final PollLoop<T> loop;
    private final String pollThreadName;
    private final Duration closeTimeout;
    private final ProcessorComposer.Composed<T> composed;
    private final ConsumerLifecycle life;

    private IdemKafkaConsumer(KafkaConsumerConfig<T> options, Duration joinTimeout, ConsumerSettings settings) {
        this.composed = KafkaProcessors.composer(options.config(), settings.group(), options.deadLetters(),
                options.deadLetterRouting()).limits(limits -> requireLeaseWithinPollInterval(limits.lease(), settings))
                .compose(options.processor());
        this.life = new ConsumerLifecycle("IdemKafkaConsumer", LOG, options.onFailure(), this::releaseResources);
        this.closeTimeout = options.closeTimeout();
        try {
            this.consumer = new KafkaConsumer<>(settings.consumer(), new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
        } catch (RuntimeException | Error e) {
            // Nothing may outlive a failed construction: lease renewal and the dead-letter producer.
            composed.close();
            throw e;
        }
        int id = INSTANCES.incrementAndGet();
        this.claims = Executors.newSingleThreadExecutor(ConsumerLifecycle.daemonThreads("idem-kafka-" + id + "-claim"));
        this.batches = Executors.newSingleThreadExecutor(ConsumerLifecycle.daemonThreads("idem-kafka-" + id + "-batch"));
        this.workers = options.concurrency() == 1 ? null : Executors.newFixedThreadPool(options.concurrency(),
                ConsumerLifecycle.daemonThreads("idem-kafka-" + id + "-worker"));
        PollLoop.Settings loopSettings = new PollLoop.Settings(options.topics(),
                String.valueOf(options.config().get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)), closeTimeout,
                joinTimeout, revokeWait(settings.maxPollInterval()), options.clock());
        this.loop = new PollLoop<>(consumer, composed.processor(), claims, batches,
                workers == null ? Runnable::run : workers, loopSettings, life, life::release);
        this.pollThreadName = "idem-kafka-" + id + "-poll";
    }

    private static void requireLeaseWithinPollInterval(Duration lease, ConsumerSettings settings) {
        if (lease.compareTo(settings.maxPollInterval()) >= 0) {
            throw new IllegalArgumentException("lease (" + lease + ") must be shorter than max.poll.interval.ms ("
                    + settings.maxPollInterval().toMillis() + " ms): a consumer that misses its poll is replaced, "
                    + "and its claims must expire before the new owner gives up on them");
        }
    }

    // The whole group waits while a member hands over its partitions: well inside max.poll.interval.ms
    // (the rebalance timeout), and never more than 10 s of the others' time.
    private static Duration revokeWait(Duration maxPollInterval) {
        Duration quarter = maxPollInterval.dividedBy(4);
        return quarter.compareTo(Duration.ofSeconds(10)) < 0 ? quarter : Duration.ofSeconds(10);
    }

    /**
     * A builder over Kafka consumer settings (at least {@code bootstrap.servers} and
     * {@code group.id}) and a processor builder. The processor's group is taken from
     * {@code group.id}, and its dead letters go to {@code <topic>.DLT} unless you set your own
     * publisher (which you then close, after this consumer).
     */
    public static <T> Builder<T> builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
        return new Builder<>(config, processor);
    }

    /**
     * Subscribes and starts polling on Idem's own thread.
     *
     * @throws IllegalStateException if already started or closed
     */
    @Override
    public void start() {
        life.start(() -> loop, pollThreadName);
    }

    /**
     * Stops in order, each step bounded by the close timeout: stop taking records (partitions stop
     * after their current record), let those finish (unstarted claims are released), commit what
     * finished, close the Kafka consumer, then stop lease renewal and close the dead-letter producer.
     * Records still running at the bound are logged, and renewal and the producer are closed only
     * once they end.
     */
    @Override
    public void close() {
        // The drain, then the Kafka consumer's own close, each bounded by the close timeout.
        life.close(() -> KafkaClients.close(consumer, Duration.ZERO), closeTimeout.multipliedBy(2).plusSeconds(5));
    }

    @Override
    public ConsumerState state() {
        return life.state();
    }

    @Override
    public Optional<Duration> oldestDeferral() {
        return composed.processor().oldestDeferral();
    }

    @Override
    public @Nullable Throwable failure() {
        return life.failure();
    }

    @Override
    public CompletionStage<Void> released() {
        return life.released();
    }

    /** Shuts the consumer's executors and closes what it made (the processor last); run once. */
    private void releaseResources() {
        claims.shutdown();
        batches.shutdown();
        if (workers != null) {
            workers.shutdown();
        }
        composed.close();
    }

    /**
     * Builds an {@link IdemKafkaConsumer}: the settings every Idem Kafka consumer takes
     * ({@link KafkaConsumerBuilder}) and the join timeout. {@link #build()} validates the settings
     * and fails naming the one that is missing or wrong. Not thread-safe.
     *
     * @param <T> payload type
     */
    public static final class Builder<T> extends KafkaConsumerBuilder<T, Builder<T>> {

        // Kafka's own default.api.timeout.ms: long enough for a broker restart, short enough to be noticed.
        private Duration joinTimeout = Duration.ofSeconds(60);

        private Builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
            super(config, processor);
        }

        /** How long the consumer may go without joining its group before it reports a failure. Default 60 s. */
        public Builder<T> joinTimeout(Duration joinTimeout) {
            this.joinTimeout = joinTimeout;
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the setting that is missing or wrong
         */
        public IdemKafkaConsumer<T> build() {
            KafkaConsumerConfig<T> options = options();
            ConsumerSettings settings = ConsumerSettings.of(options.config());
            positive("joinTimeout", joinTimeout);
            return new IdemKafkaConsumer<>(options, joinTimeout, settings);
        }
    }
}
