package dev.idem.kafka.share;

import dev.idem.core.ConsumerState;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.ProcessorComposer;
import dev.idem.kafka.KafkaConsumerBuilder;
import dev.idem.kafka.internal.ConsumerLifecycle;
import dev.idem.kafka.internal.KafkaConsumerConfig;
import dev.idem.kafka.internal.KafkaProcessors;
import dev.idem.kafka.share.internal.LiveDeliveryLimit;
import dev.idem.kafka.share.internal.ShareSettings;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;
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
public final class IdemKafkaShareConsumer<T> implements IdemConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(IdemKafkaShareConsumer.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final KafkaConsumerConfig<T> options;
    private final KafkaShareConsumer<byte[], byte[]> consumer;
    private final ExecutorService workers;
    private final Map<String, Object> adminConfig;
    private final String group;
    private final Duration limitRefresh;
    private final int maxAttempts;
    private final int id;
    private volatile @Nullable LiveDeliveryLimit limit;
    private final ProcessorComposer.Composed<T> composed;
    private final ConsumerLifecycle life;

    private IdemKafkaShareConsumer(KafkaConsumerConfig<T> options, Duration limitRefresh, ShareSettings settings) {
        this.composed = KafkaProcessors.composer(options.config(), settings.group(), options.deadLetters(),
                options.deadLetterRouting()).compose(options.processor());
        this.life = new ConsumerLifecycle("IdemKafkaShareConsumer", LOG, options.onFailure(), this::releaseResources);
        this.options = options;
        this.limitRefresh = limitRefresh;
        this.maxAttempts = composed.processor().maxAttempts();
        this.group = settings.group();
        this.adminConfig = new HashMap<>(options.config());
        adminConfig.keySet().retainAll(AdminClientConfig.configNames());
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
        this.workers = Executors.newFixedThreadPool(options.concurrency(),
                ConsumerLifecycle.daemonThreads("idem-kafka-share-" + id + "-worker"));
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
    @Override
    public void start() {
        life.start(() -> {
            limit = LiveDeliveryLimit.start(adminConfig, group, maxAttempts, limitRefresh);
            return new ShareLoop<>(consumer, composed.processor(), workers,
                    new ShareLoop.Settings(options.topics(), limit, options.closeTimeout(), options.clock()),
                    life, life::release);
        }, "idem-kafka-share-" + id + "-poll");
    }






    /**
     * Stops in order, bounded by the close timeout: nothing new starts, running records finish (their
     * locks renewed), finished records are acknowledged and the rest released, the share consumer
     * closes, then lease renewal and the dead-letter producer once no handler runs.
     */
    @Override
    public void close() {
        // The drain, the final acknowledgements and the client's own close, each bounded by the timeout.
        life.close(() -> consumer.close(Duration.ZERO), options.closeTimeout().multipliedBy(3).plusSeconds(5));
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

    /** Shuts the workers, stops reading the delivery limit and closes the processor; run once. */
    private void releaseResources() {
        workers.shutdown();
        LiveDeliveryLimit live = limit;
        if (live != null) {
            live.close();
        }
        composed.close();
    }

    /**
     * Builds an {@link IdemKafkaShareConsumer}: the settings every Idem Kafka consumer takes
     * ({@link KafkaConsumerBuilder}) and how often the delivery limit is read.
     * {@link #build()} validates the settings and fails naming the one that is missing or wrong.
     * Not thread-safe.
     *
     * @param <T> payload type
     */
    public static final class Builder<T> extends KafkaConsumerBuilder<T, Builder<T>> {

        private Duration limitRefresh = Duration.ofSeconds(30);

        private Builder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
            super(config, processor);
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

        /** @throws IllegalArgumentException naming the setting that is missing or wrong */
        public IdemKafkaShareConsumer<T> build() {
            KafkaConsumerConfig<T> options = options();
            ShareSettings settings = ShareSettings.of(options.config());
            positive("deliveryLimitRefresh", limitRefresh);
            return new IdemKafkaShareConsumer<>(options, limitRefresh, settings);
        }
    }
}
