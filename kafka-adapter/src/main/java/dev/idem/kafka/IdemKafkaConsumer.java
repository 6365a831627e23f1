package dev.idem.kafka;

import dev.idem.core.ConsumerState;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.kafka.internal.KafkaClients;
import dev.idem.kafka.internal.ConsumerSettings;
import dev.idem.kafka.internal.KafkaProcessors;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
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
public final class IdemKafkaConsumer<T> implements AutoCloseable {


    private static final Logger LOG = LoggerFactory.getLogger(IdemKafkaConsumer.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final KafkaProcessors.Composed<T> composed;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ExecutorService batches;
    private final ExecutorService workers;
    private final PollLoop<T> loop;
    private final Thread pollThread;
    private final Duration closeTimeout;
    private final Consumer<Throwable> onFailure;
    private final AtomicBoolean released = new AtomicBoolean();
    private final CompletableFuture<Void> idle = new CompletableFuture<>();
    private volatile ConsumerState state = ConsumerState.NEW;
    private volatile Throwable failure;
    private boolean started;
    private boolean closed;

    private IdemKafkaConsumer(Builder<T> b, ConsumerSettings settings) {
        this.closeTimeout = b.closeTimeout;
        this.onFailure = b.onFailure;
        this.composed = KafkaProcessors.compose(b.config, settings.group(), b.processor, b.deadLetters,
                b.deadLetterRouting);
        try {
            this.consumer = new KafkaConsumer<>(settings.consumer(), new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
        } catch (RuntimeException | Error e) {
            // Nothing may outlive a failed construction: lease renewal and the dead-letter producer.
            composed.close();
            throw e;
        }
        int id = INSTANCES.incrementAndGet();
        this.batches = Executors.newSingleThreadExecutor(daemon("idem-kafka-" + id + "-batch"));
        this.workers = b.concurrency == 1 ? null : Executors.newFixedThreadPool(b.concurrency,
                daemon("idem-kafka-" + id + "-worker"));
        PollLoop.Settings loopSettings = new PollLoop.Settings(List.copyOf(b.topics),
                String.valueOf(b.config.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)), b.closeTimeout, b.joinTimeout,
                revokeWait(settings.maxPollInterval()), b.clock);
        this.loop = new PollLoop<>(consumer, composed.processor(), batches, workers == null ? Runnable::run : workers,
                loopSettings, new Events(), this::release);
        this.pollThread = new Thread(loop, "idem-kafka-" + id + "-poll");
    }

    // The whole group waits while a member hands over its partitions: well inside max.poll.interval.ms
    // (the rebalance timeout), and never more than 10 s of the others' time.
    private static Duration revokeWait(Duration maxPollInterval) {
        Duration quarter = maxPollInterval.dividedBy(4);
        return quarter.compareTo(Duration.ofSeconds(10)) < 0 ? quarter : Duration.ofSeconds(10);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return task -> {
            Thread thread = new Thread(task, name);
            thread.setDaemon(true);
            return thread;
        };
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
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("consumer is closed; build a new IdemKafkaConsumer to consume again");
        }
        if (started) {
            throw new IllegalStateException("consumer already started");
        }
        started = true;
        state = ConsumerState.STARTING;
        pollThread.start();
    }

    /** Where the consumer is in its life: {@link ConsumerState#RUNNING} when healthy. */
    public ConsumerState state() {
        return state;
    }

    /**
     * How long the record deferred longest in a row has been coming back unsettled; empty when none
     * is ({@link IdempotentProcessor#oldestDeferral()}).
     */
    public Optional<Duration> oldestDeferral() {
        return composed.processor().oldestDeferral();
    }

    /**
     * The failure that stopped the consumer ({@link ConsumerState#FAILED}), or else the latest one it
     * survived (a failed commit, a record's escaped error, no group membership yet), or null.
     */
    public Throwable failure() {
        return failure;
    }

    /**
     * Completes once the consumer has let go of everything after {@link #close()}: no record runs any
     * more, lease renewal has stopped and the dead-letter producer is closed. {@code close()} returns
     * at its bound even when a handler still runs; close what those records still use (the Redis
     * client, a publisher of your own) when this completes.
     */
    public CompletionStage<Void> released() {
        return idle.minimalCompletionStage();
    }

    /** Whether the consumer is started and neither closed nor failed. */
    public boolean isRunning() {
        ConsumerState now = state;
        return now == ConsumerState.STARTING || now == ConsumerState.RUNNING;
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
        boolean wasStarted;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            wasStarted = started;
        }
        if (!wasStarted) {
            try {
                KafkaClients.close(consumer, Duration.ZERO);
            } finally {
                release();
                state = ConsumerState.STOPPED;
            }
            return;
        }
        loop.stop();
        try {
            // The drain, then the Kafka consumer's own close, each bounded by the close timeout.
            pollThread.join(closeTimeout.multipliedBy(2).plusSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (pollThread.isAlive()) {
            LOG.warn("Kafka consumer's poll thread is still closing after {}; it finishes in the background",
                    closeTimeout.multipliedBy(2));
        }
    }

    private void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        batches.shutdown();
        if (workers != null) {
            workers.shutdown();
        }
        try {
            composed.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the processor or the dead-letter producer failed", e);
        } finally {
            idle.complete(null);
        }
    }

    private final class Events implements PollLoop.Events {
        @Override
        public void joined() {
            if (state == ConsumerState.STARTING) {
                state = ConsumerState.RUNNING;
            }
        }

        @Override
        public void failed(Throwable cause, boolean fatal) {
            failure = cause;
            if (fatal) {
                state = ConsumerState.FAILED;
            }
            try {
                onFailure.accept(cause);
            } catch (RuntimeException e) {
                LOG.warn("the onFailure listener threw", e);
            }
        }

        @Override
        public void ended() {
            if (state != ConsumerState.FAILED) {
                state = ConsumerState.STOPPED;
            }
        }
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
        private int concurrency = 1;
        private UnaryOperator<DeadLetterPublisher> deadLetters = UnaryOperator.identity();
        private DeadLetterRouting deadLetterRouting = DeadLetterRouting.suffix(".DLT");
        private Consumer<Throwable> onFailure = failure -> { };
        private Clock clock = Clock.systemUTC();
        // Long enough for a slow handler or a dead-letter publish to end; a shutdown hook should allow it.
        private Duration closeTimeout = Duration.ofSeconds(30);
        // Kafka's own default.api.timeout.ms: long enough for a broker restart, short enough to be noticed.
        private Duration joinTimeout = Duration.ofSeconds(60);

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
         * Wraps the dead-letter publisher (the one set on the processor builder, or else Idem's
         * {@code <topic>.DLT} publisher), e.g. to count or log dead letters. Default: as it is.
         */
        public Builder<T> deadLetters(UnaryOperator<DeadLetterPublisher> decorator) {
            this.deadLetters = decorator;
            return this;
        }

        /**
         * Where Idem's own dead-letter publisher sends dead letters. Default {@code <topic>.DLT}. Not
         * used when the processor builder has a publisher of its own.
         */
        public Builder<T> deadLetterRouting(DeadLetterRouting routing) {
            this.deadLetterRouting = Objects.requireNonNull(routing, "routing");
            return this;
        }

        /**
         * Told about every failure outside Idem's outcomes: one it survives (a failed commit, a
         * record's escaped error, no group membership after the join timeout) or the one that stops
         * the consumer ({@link #state()} is then {@link ConsumerState#FAILED}). Called on Idem's threads; keep it quick.
         */
        public Builder<T> onFailure(Consumer<Throwable> onFailure) {
            this.onFailure = onFailure;
            return this;
        }

        /** The clock for backoff deadlines and the join timeout. Default: the UTC system clock. */
        public Builder<T> clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** The bound on each step of {@link #close()}. Default 30 s. */
        public Builder<T> closeTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
            return this;
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
            ConsumerSettings settings = ConsumerSettings.of(config);
            if (topics.isEmpty() || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
                throw new IllegalArgumentException("topics must name at least one topic but were " + topics);
            }
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be >= 1 but was " + concurrency);
            }
            positive("closeTimeout", closeTimeout);
            positive("joinTimeout", joinTimeout);
            required("deadLetters", deadLetters);
            required("onFailure", onFailure);
            required("clock", clock);
            Duration lease = processor.lease();
            if (lease != null && lease.compareTo(settings.maxPollInterval()) >= 0) {
                throw new IllegalArgumentException("lease (" + lease + ") must be shorter than max.poll.interval.ms ("
                        + settings.maxPollInterval().toMillis() + " ms): a consumer that misses its poll is replaced, "
                        + "and its claims must expire before the new owner gives up on them");
            }
            return new IdemKafkaConsumer<>(this, settings);
        }

        private static void positive(String name, Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " must be > 0 but was " + value);
            }
        }

        private static void required(String name, Object value) {
            if (value == null) {
                throw new IllegalArgumentException(name + " is required but was not set");
            }
        }
    }
}
