package dev.idem.kafka;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Ticker;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.kafka.internal.KafkaConsumerConfig;
import dev.idem.kafka.internal.MonotonicClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The settings both Idem Kafka consumers take, under one name each: {@link IdemKafkaConsumer.Builder}
 * and the share consumer's builder extend it with their own. Every setter returns the concrete
 * builder. Not thread-safe; not meant to be extended outside Idem.
 *
 * @param <T> payload type
 * @param <B> the concrete builder
 */
public abstract class KafkaConsumerBuilder<T, B extends KafkaConsumerBuilder<T, B>> {

    private final Map<String, Object> config;
    private final IdempotentProcessor.Builder<T> processor;
    private final List<String> topics = new ArrayList<>();
    private int concurrency = 1;
    private UnaryOperator<DeadLetterPublisher> deadLetters = UnaryOperator.identity();
    private DeadLetterRouting deadLetterRouting = DeadLetterRouting.KAFKA_DEFAULT;
    private Consumer<Throwable> onFailure = failure -> { };
    private Ticker ticker = Ticker.system();
    // Long enough for a slow handler or a dead-letter publish to end; a shutdown hook should allow it.
    private Duration closeTimeout = IdemConsumer.DEFAULT_CLOSE_TIMEOUT;

    /**
     * @param config    Kafka client settings, copied
     * @param processor the processor to build for this consumer
     */
    protected KafkaConsumerBuilder(Map<String, Object> config, IdempotentProcessor.Builder<T> processor) {
        this.config = new HashMap<>(Objects.requireNonNull(config, "config"));
        this.processor = Objects.requireNonNull(processor, "processor");
    }

    /** Topics to subscribe to. Required. */
    public B topics(String... topics) {
        this.topics.addAll(List.of(topics));
        return self();
    }

    /**
     * How many records run at once. A consumer group runs that many partitions at once, each in
     * offset order; a share group, which keeps no order, that many records. Default 1.
     */
    public B concurrency(int concurrency) {
        this.concurrency = concurrency;
        return self();
    }

    /**
     * Wraps the dead-letter publisher (the one set on the processor builder, or else Idem's
     * {@code <topic>.DLT} publisher), e.g. to count or log dead letters. Default: as it is.
     */
    public B deadLetters(UnaryOperator<DeadLetterPublisher> decorator) {
        this.deadLetters = decorator;
        return self();
    }

    /**
     * Where Idem's own dead-letter publisher sends dead letters. Default {@code <topic>.DLT}. Not
     * used when the processor builder has a publisher of its own.
     */
    public B deadLetterRouting(DeadLetterRouting routing) {
        this.deadLetterRouting = routing;
        return self();
    }

    /**
     * Told about every failure outside Idem's outcomes: one the consumer survives (a failed commit
     * or claim round trip, a record's escaped error, no group membership after the join timeout) or
     * the one that stops it (its state is then {@code FAILED}). Called on Idem's threads; keep it quick.
     */
    public B onFailure(Consumer<Throwable> onFailure) {
        this.onFailure = onFailure;
        return self();
    }

    /**
     * Where backoff deadlines, lock renewals and the join timeout read elapsed time, as the
     * processor's {@code ticker} does. Default {@link Ticker#system()}, so a wall-clock step (NTP)
     * neither ends a backoff early nor renews a lock late; tests move one by hand.
     */
    public B ticker(Ticker ticker) {
        this.ticker = ticker;
        return self();
    }

    /** The bound on each step of {@code close()}. Default 30 s. */
    public B closeTimeout(Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
        return self();
    }

    /**
     * The shared settings, checked: a concrete builder's {@code build()} calls it first.
     *
     * @throws IllegalArgumentException naming the setting that is missing or wrong
     */
    protected final KafkaConsumerConfig<T> options() {
        if (topics.isEmpty() || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
            throw new IllegalArgumentException("topics must name at least one topic but were " + topics);
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be >= 1 but was " + concurrency);
        }
        positive("closeTimeout", closeTimeout);
        required("deadLetters", deadLetters);
        required("deadLetterRouting", deadLetterRouting);
        required("onFailure", onFailure);
        required("ticker", ticker);
        return new KafkaConsumerConfig<>(Collections.unmodifiableMap(new HashMap<>(config)), processor, List.copyOf(topics), concurrency, deadLetters,
                deadLetterRouting, onFailure, MonotonicClock.of(ticker), closeTimeout);
    }

    /** @throws IllegalArgumentException naming {@code name} unless {@code value} is set and above zero */
    protected static void positive(String name, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be > 0 but was " + value);
        }
    }

    /** @throws IllegalArgumentException naming {@code name} when {@code value} is null */
    protected static void required(String name, Object value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is required but was not set");
        }
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
