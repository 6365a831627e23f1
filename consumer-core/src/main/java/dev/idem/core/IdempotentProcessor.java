package dev.idem.core;

import dev.idem.core.internal.Meters;
import dev.idem.core.internal.MicrometerMeters;
import dev.idem.core.internal.OpenTelemetryTracing;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.DeadLetterPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Runs deliveries through Idem's fixed order: claim, business dedup check, handler, then done,
 * retry, or dead letter and compensation (the order itself is in one class, {@code Protocol}).
 * Built by {@link #builder}; immutable and thread-safe, so one processor serves all of a consumer's
 * threads. Close it after its consumer, to stop lease renewal.
 *
 * <pre>{@code
 * IdempotentProcessor<Order> processor = IdempotentProcessor.builder(handler)
 *     .group("inventory").codec(PayloadCodec.json(Order.class)).keys(KeySource.payload(Order::id))
 *     .claims(redisClaims).dedupCheck(ledger).deadLetters(publisher).build();
 * }</pre>
 *
 * @param <T> payload type
 */
public final class IdempotentProcessor<T> implements AutoCloseable {

    private final Protocol<T> protocol;
    private final int maxAttempts;

    private IdempotentProcessor(Builder<T> b, ProcessorConfig<T> config) {
        Meters meters = b.meterRegistry == null ? Meters.NONE : new MicrometerMeters(b.meterRegistry, config.group(), b.meterTags);
        Tracing tracing = b.openTelemetry == null ? Tracing.NONE
                : new OpenTelemetryTracing(b.openTelemetry, config.group(), b.traceKeys);
        this.protocol = new Protocol<>(config, meters, tracing);
        this.maxAttempts = config.maxAttempts();
    }

    /**
     * A builder for a processor running {@code handler}.
     *
     * @throws NullPointerException if handler is null
     */
    public static <T> Builder<T> builder(DeliveryHandler<T> handler) {
        return new Builder<>(handler);
    }

    /** Processes one message: one claim round trip, and one completion round trip sent without waiting. */
    public Outcome process(Envelope envelope) {
        try (Batch<T> batch = open(List.of(envelope))) {
            return batch.process(0);
        }
    }

    /**
     * Claims the keys of {@code envelopes} in one round trip per store node. Process the messages
     * with {@link Batch#process}, in the broker's order, then close the batch.
     */
    public Batch<T> open(List<Envelope> envelopes) {
        return new Batch<>(protocol, protocol.open(envelopes));
    }

    /**
     * How long the message deferred longest in a row by this processor has been coming back without
     * being settled (infrastructure trouble, the claim store or the business check unreachable);
     * empty when none is. A message stuck this way holds its Kafka partition or RocketMQ queue: the
     * {@code idem.deferral.oldest.age} gauge and Micronaut's health report it.
     */
    public Optional<Duration> oldestDeferral() {
        return protocol.oldestDeferral();
    }

    /** The claim lease, renewed while a claim is held. */
    public Duration lease() {
        return protocol.lease();
    }

    /** Handler runs before the dead letter, for adapters that check it against the broker's own limit. */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * Completes what open batches finished and waits for the completions sent, then stops renewing
     * leases, except for handlers still running (one that outlived its consumer's grace): those keep
     * their leases renewed until they return, and their effects are completed then, so no other owner
     * runs their keys meanwhile. Close batches first: the unstarted claims of a batch still open stay
     * until their leases expire.
     */
    @Override
    public void close() {
        protocol.close();
    }

    /**
     * Builds a processor. Setters are named by what they set; {@link #build()} validates and fails
     * naming the setting. Not thread-safe.
     *
     * @param <T> payload type
     */
    public static final class Builder<T> {

        // Package-private: read once, into a ProcessorConfig, when the processor is built.
        final DeliveryHandler<T> handler;
        // Required: null until set, refused by build() when still null.
        @Nullable String group;
        @Nullable ClaimStore claims;
        @Nullable DedupCheck<? super T> dedupCheck;
        @Nullable DeadLetterPublisher deadLetters;
        @Nullable PayloadCodec<T> codec;
        @Nullable KeySource<T> keys;
        Compensation compensation = Compensation.none();
        HandlerInterceptor interceptor = HandlerInterceptor.none();
        // Five attempts, then the dead letter.
        int maxAttempts = 5;
        // Longer than a typical handler, short enough that a crashed owner's keys come back quickly.
        Duration lease = Duration.ofSeconds(30);
        Backoff backoff = Backoff.standard();
        // A handler's infrastructure trouble is deferred, uncounted, this long; then it counts. Rides
        // out a failover, a restart or a deploy of what the handler calls; a host that is gone for
        // good holds a Kafka partition no longer than this, then its message goes the failure's way.
        Duration maxDeferral = Duration.ofMinutes(30);
        final List<Class<? extends Throwable>> fatal = new ArrayList<>();
        final List<Class<? extends Throwable>> infrastructure = new ArrayList<>();
        // A throwing compensation hook is retried this often, then reported.
        int compensationAttempts = 3;
        Clock clock = Clock.systemUTC();
        Ticker ticker = Ticker.system();
        // A Micrometer MeterRegistry, or null for no metrics; typed loosely so Micrometer is optional.
        @Nullable Object meterRegistry;
        final Map<String, String> meterTags = new LinkedHashMap<>();
        // An OpenTelemetry, or null for no spans; typed loosely so the OpenTelemetry API is optional.
        @Nullable Object openTelemetry;
        TraceKeys traceKeys = TraceKeys.OFF;
        Consumer<Outcome> onOutcome = outcome -> { };

        private Builder(DeliveryHandler<T> handler) {
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * A new builder with every setting of {@code base}, its handler included, as it is now; the
         * two change apart from then on. Adapters build from a copy, so a user's builder is never
         * edited by the consumer it is given to.
         */
        public static <T> Builder<T> from(Builder<T> base) {
            Builder<T> copy = new Builder<>(base.handler);
            copy.group = base.group;
            copy.claims = base.claims;
            copy.dedupCheck = base.dedupCheck;
            copy.deadLetters = base.deadLetters;
            copy.codec = base.codec;
            copy.keys = base.keys;
            copy.compensation = base.compensation;
            copy.interceptor = base.interceptor;
            copy.maxAttempts = base.maxAttempts;
            copy.lease = base.lease;
            copy.backoff = base.backoff;
            copy.maxDeferral = base.maxDeferral;
            copy.fatal.addAll(base.fatal);
            copy.infrastructure.addAll(base.infrastructure);
            copy.compensationAttempts = base.compensationAttempts;
            copy.clock = base.clock;
            copy.ticker = base.ticker;
            copy.meterRegistry = base.meterRegistry;
            copy.meterTags.putAll(base.meterTags);
            copy.openTelemetry = base.openTelemetry;
            copy.traceKeys = base.traceKeys;
            copy.onOutcome = base.onOutcome;
            return copy;
        }

        /** Consumer group; keys are namespaced by it. Required. */
        public Builder<T> group(String group) {
            this.group = group;
            return this;
        }

        /** Where claims are kept (Redis in production). Required. */
        public Builder<T> claims(ClaimStore claims) {
            this.claims = claims;
            return this;
        }

        /**
         * The business dedup check, the guarantee behind the claim. Required: pass
         * {@link DedupCheck#none()} to run on the claim alone, knowing it can let duplicates through.
         */
        public Builder<T> dedupCheck(DedupCheck<? super T> dedupCheck) {
            this.dedupCheck = dedupCheck;
            return this;
        }

        /** Where dead letters go; adapters provide one per broker. Required. */
        public Builder<T> deadLetters(DeadLetterPublisher deadLetters) {
            this.deadLetters = deadLetters;
            return this;
        }

        /** How bodies are decoded. Required. */
        public Builder<T> codec(PayloadCodec<T> codec) {
            this.codec = codec;
            return this;
        }

        /** Where the idempotency key comes from. Required; a business key is recommended. */
        public Builder<T> keys(KeySource<T> keys) {
            this.keys = keys;
            return this;
        }

        /** Called once per dead-lettered key. Default: none. */
        public Builder<T> compensation(Compensation compensation) {
            this.compensation = compensation;
            return this;
        }

        /** How often a throwing compensation is tried before it is reported. Default 3. */
        public Builder<T> compensationAttempts(int compensationAttempts) {
            this.compensationAttempts = compensationAttempts;
            return this;
        }

        /** The interceptor slot around the handler. Default: none. */
        public Builder<T> interceptor(HandlerInterceptor interceptor) {
            this.interceptor = interceptor;
            return this;
        }

        /** Attempts before the dead letter. Default 5. */
        public Builder<T> maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * How long a handler's infrastructure trouble ({@link InfrastructureException}, a refused
         * connection, a transient SQL error) is deferred without counting an attempt, from its first
         * deferral in this process; after that each such failure counts, so a message that can never
         * succeed reaches the dead letter instead of blocking its partition. The claim store and the
         * business check being down are never counted (nothing is known then). Default 30 minutes.
         */
        public Builder<T> maxDeferral(Duration maxDeferral) {
            this.maxDeferral = maxDeferral;
            return this;
        }

        /** Claim lease, renewed while held; must exceed the worst handler pause. Default 30 s. */
        public Builder<T> lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /** Delay between attempts. Default exponential from 1 s to 1 min with 20% jitter. */
        public Builder<T> backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /** Exception classes never retried, besides {@link NonRetryableException}. */
        @SafeVarargs
        public final Builder<T> fatal(Class<? extends Throwable>... types) {
            for (Class<? extends Throwable> type : types) {
                fatal.add(Objects.requireNonNull(type, "fatal exception class"));
            }
            return this;
        }

        /**
         * Exception classes that mean infrastructure trouble, not the message's fault: the delivery
         * is deferred (not counted, retried after the backoff) for up to {@link #maxDeferral}. Besides
         * {@link InfrastructureException}, transient and connection {@code SQLException}s and refused
         * connections, which always are.
         */
        @SafeVarargs
        public final Builder<T> infrastructure(Class<? extends Throwable>... types) {
            for (Class<? extends Throwable> type : types) {
                infrastructure.add(Objects.requireNonNull(type, "infrastructure exception class"));
            }
            return this;
        }

        /**
         * Called with every outcome, on the thread that processed the message, for applications that
         * observe outcomes without Micrometer. It must be quick and must not throw (a throw is logged).
         */
        public Builder<T> onOutcome(Consumer<Outcome> listener) {
            this.onOutcome = listener;
            return this;
        }

        /** Clock for dead-letter timestamps and deferral ages. Default UTC system clock. */
        public Builder<T> clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Where elapsed time is read for leases (whether a claim's lease may have ended while its
         * message waited or ran) and for completion timing. Default {@link Ticker#system()}; tests
         * move one by hand.
         */
        public Builder<T> ticker(Ticker ticker) {
            this.ticker = ticker;
            return this;
        }

        /**
         * Where metrics go (Micrometer must then be on the class path). Default: no metrics. The
         * meters are listed in docs/guide/operating.md.
         */
        public Builder<T> meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /**
         * Where spans go (the OpenTelemetry API must then be on the class path): one span per message
         * run, its parent the producer's context read from the message's W3C {@code traceparent}
         * header (or the consumer client's own span, where the client is traced), with child spans
         * for the business check, the handler, the dead letter and the compensation; the handler runs
         * with it current, and with {@code trace_id} and {@code span_id} in the MDC. Default: none.
         * The spans and their attributes are listed in docs/guide/tracing.md.
         */
        public Builder<T> openTelemetry(OpenTelemetry openTelemetry) {
            this.openTelemetry = openTelemetry;
            return this;
        }

        /** Whether spans carry the idempotency key, hashed or as it is. Default {@link TraceKeys#OFF}. */
        public Builder<T> traceKeys(TraceKeys traceKeys) {
            this.traceKeys = traceKeys;
            return this;
        }

        /**
         * A tag on every one of this processor's meters, besides {@code group} (and {@code topic}
         * and {@code outcome} where they apply), e.g. the name of the listener it runs. Default: none.
         *
         * @throws IllegalArgumentException if the key is one of Idem's own tags, or key or value is blank
         */
        public Builder<T> meterTag(String key, String value) {
            if (key == null || key.isBlank() || value == null || value.isBlank()) {
                throw new IllegalArgumentException("meterTag: key and value must not be blank");
            }
            if (List.of("group", "topic", "outcome").contains(key)) {
                throw new IllegalArgumentException("meterTag: '" + key + "' is one of Idem's own tags");
            }
            meterTags.put(key, value);
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the first setting that is missing or wrong
         */
        public IdempotentProcessor<T> build() {
            BuilderChecks.check(this);
            return new IdempotentProcessor<>(this, ProcessorConfig.of(this));
        }
    }
}
