package dev.idem.core;

import dev.idem.core.internal.Failures;
import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Pipeline;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.ProcessorMetrics;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.DeadLetterPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs deliveries through Idem's fixed order (DESIGN §2): claim, business dedup check, handler,
 * then done, retry, or dead letter and compensation. Built by {@link #builder}; immutable and
 * thread-safe, so one processor serves all of a consumer's threads. Close it to stop lease renewal.
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

    // How long a claim or close waits for the previous completion: a Redis round trip, with margin.
    private static final Duration COMPLETION_WAIT = Duration.ofSeconds(5);

    private final Pipeline<T> pipeline;
    private final ClaimStore claims;
    private final Duration lease;
    private final LeaseRenewer renewer;
    private final String instance = UUID.randomUUID().toString().substring(0, 13);
    private final AtomicLong owners = new AtomicLong();
    // The last completion sent and not yet confirmed (decision 0007).
    private final AtomicReference<CompletableFuture<?>> pendingCompletion =
            new AtomicReference<>(CompletableFuture.completedFuture(null));

    private IdempotentProcessor(Builder<T> b) {
        this.claims = b.claims;
        this.lease = b.lease;
        ProcessorMetrics metrics = new ProcessorMetrics(b.meterRegistry, b.group);
        this.pipeline = new Pipeline<>(new Pipeline.Settings<>(b.group, b.claims, b.dedupCheck, b.handler,
                b.interceptor, b.codec, b.keys, b.maxAttempts, b.backoff, new Failures(b.fatal), b.deadLetters,
                b.compensation, b.compensationAttempts, b.clock, metrics));
        this.renewer = new LeaseRenewer(b.claims, b.lease, metrics);
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
        try (Batch<T> batch = open(List.of(envelope), true)) {
            return batch.process(0);
        }
    }

    /**
     * Claims the keys of {@code envelopes} in one round trip per store node. Process the messages
     * with {@link Batch#process}, in the broker's order, then close the batch.
     */
    public Batch<T> open(List<Envelope> envelopes) {
        return open(envelopes, false);
    }

    private Batch<T> open(List<Envelope> envelopes, boolean firm) {
        awaitPendingCompletion();
        List<Prepared<T>> items = new ArrayList<>(envelopes.size());
        Map<IdempotencyKey, ClaimRequest> requests = new LinkedHashMap<>();
        for (Envelope envelope : envelopes) {
            Prepared<T> item = pipeline.prepare(envelope);
            items.add(item);
            requests.putIfAbsent(item.key(), new ClaimRequest(item.key(), envelope.brokerAttempt()));
        }
        String owner = instance + "-" + owners.incrementAndGet();
        Map<IdempotencyKey, Claim> claimed = new HashMap<>();
        ClaimStoreException failure = null;
        try {
            for (Claim claim : pipeline.claim(List.copyOf(requests.values()), owner, lease, firm)) {
                claimed.put(claim.key(), claim);
            }
        } catch (ClaimStoreException e) {
            failure = e;
        }
        return new Batch<>(pipeline, claims, renewer, owner, firm, items, claimed, failure, pendingCompletion::set);
    }

    /**
     * Waits for the last completion sent, so a key completed by the previous batch is found done,
     * not busy. Its failure was logged where it happened.
     */
    private void awaitPendingCompletion() {
        try {
            pendingCompletion.get().get(COMPLETION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Logged by the batch; a late or failed completion only makes the key look busy a while longer.
        }
    }

    /** The claim lease, renewed while a claim is held. */
    public Duration lease() {
        return lease;
    }

    /**
     * Waits for the last completion sent, then stops renewing leases. Batches still open keep their
     * claims until the leases expire.
     */
    @Override
    public void close() {
        awaitPendingCompletion();
        renewer.close();
    }

    /**
     * Builds a processor. Setters are named by what they set; {@link #build()} validates and fails
     * naming the setting. Not thread-safe.
     *
     * @param <T> payload type
     */
    public static final class Builder<T> {

        private final DeliveryHandler<T> handler;
        private String group;
        private ClaimStore claims;
        private DedupCheck<? super T> dedupCheck;
        private DeadLetterPublisher deadLetters;
        private PayloadCodec<T> codec;
        private KeySource<T> keys;
        private Compensation compensation = Compensation.none();
        private HandlerInterceptor interceptor = HandlerInterceptor.none();
        // DESIGN §4: five attempts, then the dead letter.
        private int maxAttempts = 5;
        // Longer than a typical handler, short enough that a crashed owner's keys come back quickly.
        private Duration lease = Duration.ofSeconds(30);
        private Backoff backoff = Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(1), 0.2);
        private final List<Class<? extends Throwable>> fatal = new ArrayList<>();
        // A throwing compensation hook is retried this often, then reported.
        private int compensationAttempts = 3;
        private Clock clock = Clock.systemUTC();
        private MeterRegistry meterRegistry = Metrics.globalRegistry;

        private Builder(DeliveryHandler<T> handler) {
            this.handler = Objects.requireNonNull(handler, "handler");
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

        /** Claim lease, renewed while held; must exceed the worst handler pause. Default 30 s. */
        public Builder<T> lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /** The attempts set so far, for adapters that check them against the broker's own limit. */
        public int maxAttempts() {
            return maxAttempts;
        }

        /** The group set so far, or null: adapters fill it in from the broker's group and refuse a different one. */
        public String group() {
            return group;
        }

        /** The dead-letter publisher set so far, or null: adapters provide theirs when none is set. */
        public DeadLetterPublisher deadLetters() {
            return deadLetters;
        }

        /** The lease set so far, for adapters that validate it against broker settings. */
        public Duration lease() {
            return lease;
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

        /** Clock for dead-letter timestamps. Default UTC system clock. */
        public Builder<T> clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Where metrics go. Default: Micrometer's global registry. */
        public Builder<T> meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the first setting that is missing or wrong
         */
        public IdempotentProcessor<T> build() {
            if (group == null || group.isBlank()) {
                throw new IllegalArgumentException("group must not be blank but was '" + group + "'");
            }
            required("claims", claims);
            required("dedupCheck", dedupCheck);
            required("deadLetters", deadLetters);
            required("codec", codec);
            required("keys", keys);
            required("compensation", compensation);
            required("interceptor", interceptor);
            required("backoff", backoff);
            required("clock", clock);
            required("meterRegistry", meterRegistry);
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be >= 1 but was " + maxAttempts);
            }
            if (compensationAttempts < 1) {
                throw new IllegalArgumentException("compensationAttempts must be >= 1 but was " + compensationAttempts);
            }
            if (lease == null || lease.toMillis() < 100) {
                throw new IllegalArgumentException("lease must be >= 100ms but was " + lease);
            }
            return new IdempotentProcessor<>(this);
        }

        private static void required(String name, Object value) {
            if (value == null) {
                throw new IllegalArgumentException(name + " is required but was not set");
            }
        }
    }
}
