package dev.idem.kafka.share;

import dev.idem.core.ConsumerState;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.kafka.internal.KafkaProcessors;
import dev.idem.kafka.share.internal.LiveDeliveryLimit;
import dev.idem.kafka.share.internal.MonotonicClock;
import dev.idem.kafka.share.internal.ShareSettings;
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
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka share-group consumer (KIP-932, "queues for Kafka") that applies each record's effect once.
 * Several members read the same partitions and the broker counts each record's deliveries; Idem
 * claims each poll's keys in one round trip and acknowledges every record by its outcome (decision
 * 0032): applied, duplicate and dead-lettered records are accepted; a failed run is released after
 * its backoff (the broker counts that delivery); a busy or deferred record is held, its lock
 * renewed, and tried again here, since releasing it would spend a delivery on no run. On a record's
 * last delivery nothing is released while the member runs: Idem settles it, so the broker archives
 * no record Idem has not dead-lettered, unless the member crashes or closes holding it (logged).
 * A handler longer than the acquisition lock keeps it by renewal.
 *
 * <pre>{@code
 * IdemKafkaShareConsumer<Order> consumer = IdemKafkaShareConsumer.builder(shareConfig, processorBuilder)
 *     .topics("orders").concurrency(8).build();
 * consumer.start();   // checks the group's share.delivery.count.limit, then polls
 * ...
 * consumer.close();
 * }</pre>
 *
 * <p>Thread-safe: start, close and read the state from any thread.
 *
 * @param <T> payload type
 */
public final class IdemKafkaShareConsumer<T> implements AutoCloseable {


    private static final Logger LOG = LoggerFactory.getLogger(IdemKafkaShareConsumer.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final KafkaProcessors.Composed<T> composed;
    private final KafkaShareConsumer<byte[], byte[]> consumer;
    private final ExecutorService workers;
    private final Map<String, Object> adminConfig;
    private final String group;
    private final int maxAttempts;
    private final Duration closeTimeout;
    private final List<String> topics;
    private final Clock clock;
    private final Duration limitRefresh;
    private volatile LiveDeliveryLimit limit;
    private final int id;
    private final Consumer<Throwable> onFailure;
    private final AtomicBoolean released = new AtomicBoolean();
    private final CompletableFuture<Void> idle = new CompletableFuture<>();
    private volatile ConsumerState state = ConsumerState.NEW;
    private volatile Throwable failure;
    private ShareLoop<T> loop;
    private Thread pollThread;
    private boolean started;
    private boolean closed;

    private IdemKafkaShareConsumer(Builder<T> b, ShareSettings settings) {
        this.closeTimeout = b.closeTimeout;
        this.onFailure = b.onFailure;
        this.topics = List.copyOf(b.topics);
        this.clock = b.clock;
        this.limitRefresh = b.limitRefresh;
        this.group = settings.group();
        this.maxAttempts = b.processor.maxAttempts();
        this.adminConfig = new HashMap<>(b.config);
        adminConfig.keySet().retainAll(AdminClientConfig.configNames());
        this.composed = KafkaProcessors.compose(b.config, settings.group(), b.processor, b.deadLetters,
                b.deadLetterRouting);
        try {
            this.consumer = new KafkaShareConsumer<>(settings.consumer(), new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
        } catch (ConfigException e) {
            composed.close();
            throw new IllegalArgumentException("share consumer settings: " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            // Nothing may outlive a failed construction: lease renewal and the dead-letter producer.
            composed.close();
            throw e;
        }
        this.id = INSTANCES.incrementAndGet();
        this.workers = Executors.newFixedThreadPool(b.concurrency, task -> {
            Thread thread = new Thread(task, "idem-kafka-share-" + id + "-worker");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * A builder over share consumer settings (at least {@code bootstrap.servers} and {@code group.id},
     * the share group) and a processor builder. The processor's group is taken from
     * {@code group.id}, and its dead letters go to {@code <topic>.DLT} unless you set your own
     * publisher (which you then close, after this consumer).
     */
    public static <T> Builder<T> builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
        return new Builder<>(config, processor);
    }

    /**
     * Reads the group's {@code share.delivery.count.limit} (or the brokers' default), refuses one
     * without room for Idem's attempts, then subscribes and polls on Idem's own thread.
     *
     * @throws IllegalArgumentException naming {@code share.delivery.count.limit} when it is below
     *                                  {@code maxAttempts + 2}
     * @throws IllegalStateException    if already started or closed, or the limit cannot be read
     */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("consumer is closed; build a new IdemKafkaShareConsumer to consume again");
        }
        if (started) {
            throw new IllegalStateException("consumer already started");
        }
        limit = LiveDeliveryLimit.start(adminConfig, group, maxAttempts, limitRefresh);
        started = true;
        state = ConsumerState.STARTING;
        loop = new ShareLoop<>(consumer, composed.processor(), workers,
                new ShareLoop.Settings(topics, limit, closeTimeout, clock), new Events(), this::release);
        pollThread = new Thread(loop, "idem-kafka-share-" + id + "-poll");
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

    /** The failure that stopped the consumer ({@link ConsumerState#FAILED}), or else the latest it survived, or null. */
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
     * Stops in order, bounded by the close timeout: nothing new starts, running records finish (their
     * locks renewed), finished records are acknowledged and the rest released, the share consumer
     * closes, then lease renewal and the dead-letter producer once no handler runs.
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
                consumer.close(Duration.ZERO);
            } finally {
                release();
                state = ConsumerState.STOPPED;
            }
            return;
        }
        loop.stop();
        if (Thread.currentThread() == pollThread) {
            return;   // called from onFailure: the poll thread closes everything once it returns
        }
        try {
            // The drain, the final acknowledgements and the client's own close, each bounded by the timeout.
            pollThread.join(closeTimeout.multipliedBy(3).plusSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (pollThread.isAlive()) {
            LOG.warn("Kafka share consumer's poll thread is still closing after {}; it finishes in the background",
                    closeTimeout.multipliedBy(3));
        }
    }

    private void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        workers.shutdown();
        LiveDeliveryLimit live = limit;
        if (live != null) {
            live.close();
        }
        try {
            composed.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the processor or the dead-letter producer failed", e);
        } finally {
            idle.complete(null);
        }
    }

    private final class Events implements ShareLoop.Events {
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
     * Builds an {@link IdemKafkaShareConsumer}; {@link #build()} validates the settings and fails
     * naming the one that is missing or wrong. Not thread-safe.
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
        private Clock clock = MonotonicClock.system();
        private Duration limitRefresh = Duration.ofSeconds(30);
        // Long enough for a slow handler or a dead-letter publish to end; a shutdown hook should allow it.
        private Duration closeTimeout = Duration.ofSeconds(30);

        private Builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
            this.config = new HashMap<>(Objects.requireNonNull(config, "config"));
            this.processor = Objects.requireNonNull(processor, "processor");
        }

        /** Topics to subscribe to. Required. */
        public Builder<T> topics(String... topics) {
            this.topics.addAll(List.of(topics));
            return this;
        }

        /** How many records run at once (share groups keep no order). Default 1. */
        public Builder<T> concurrency(int concurrency) {
            this.concurrency = concurrency;
            return this;
        }

        /** Wraps the dead-letter publisher, e.g. to count or log dead letters. Default: as it is. */
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
         * Told about every failure outside Idem's outcomes: one it survives (a claim round trip that
         * failed, a record's escaped error) or the one that stops the consumer. Called on Idem's
         * threads; keep it quick.
         */
        public Builder<T> onFailure(Consumer<Throwable> onFailure) {
            this.onFailure = onFailure;
            return this;
        }

        /**
         * The clock for backoff deadlines and lock renewals. Default: one that follows
         * {@code System.nanoTime()}, so a wall-clock step (NTP) neither renews a lock late nor a
         * backoff early.
         */
        public Builder<T> clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * How often the group's {@code share.delivery.count.limit} is read again (it is a dynamic
         * setting, and Idem must know a record's last delivery to dead-letter it before the broker
         * archives it). Default 30 s.
         */
        public Builder<T> deliveryLimitRefresh(Duration period) {
            this.limitRefresh = period;
            return this;
        }

        /** The bound on {@link #close()}'s wait for running records. Default 30 s. */
        public Builder<T> closeTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
            return this;
        }

        /** @throws IllegalArgumentException naming the setting that is missing or wrong */
        public IdemKafkaShareConsumer<T> build() {
            ShareSettings settings = ShareSettings.of(config);
            if (topics.isEmpty() || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
                throw new IllegalArgumentException("topics must name at least one topic but were " + topics);
            }
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be >= 1 but was " + concurrency);
            }
            if (closeTimeout == null || closeTimeout.isNegative() || closeTimeout.isZero()) {
                throw new IllegalArgumentException("closeTimeout must be > 0 but was " + closeTimeout);
            }
            Objects.requireNonNull(deadLetters, "deadLetters");
            Objects.requireNonNull(onFailure, "onFailure");
            Objects.requireNonNull(clock, "clock");
            if (limitRefresh == null || limitRefresh.isNegative() || limitRefresh.isZero()) {
                throw new IllegalArgumentException("deliveryLimitRefresh must be > 0 but was " + limitRefresh);
            }
            return new IdemKafkaShareConsumer<>(this, settings);
        }
    }
}
