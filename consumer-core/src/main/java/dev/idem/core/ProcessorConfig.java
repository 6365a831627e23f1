package dev.idem.core;

import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.DeadLetterPublisher;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A processor's settings, made by {@link IdempotentProcessor.Builder#build()} once {@link BuilderChecks}
 * passed: what the {@link Protocol} and its steps read, fixed at build time, so a builder changed
 * afterwards changes nothing in a processor already built.
 *
 * @param <T> payload type
 */
record ProcessorConfig<T>(String group, ClaimStore claims, DedupCheck<? super T> dedupCheck,
                          DeliveryHandler<T> handler, HandlerInterceptor interceptor, PayloadCodec<T> codec,
                          KeySource<T> keys, int maxAttempts, Duration lease, Backoff backoff,
                          Duration maxDeferral, List<Class<? extends Throwable>> fatal,
                          List<Class<? extends Throwable>> infrastructure, DeadLetterPublisher deadLetters,
                          Compensation compensation, int compensationAttempts, Clock clock,
                          Ticker ticker, Consumer<Outcome> onOutcome) {

    ProcessorConfig {
        fatal = List.copyOf(fatal);
        infrastructure = List.copyOf(infrastructure);
    }

    /** The settings of {@code b}, which {@code build()} has checked. */
    static <T> ProcessorConfig<T> of(IdempotentProcessor.Builder<T> b) {
        return new ProcessorConfig<>(set(b.group), claimsOf(b), set(b.dedupCheck), b.handler, b.interceptor, set(b.codec),
                set(b.keys), b.maxAttempts, b.lease, b.backoff, b.maxDeferral, b.fatal, b.infrastructure, set(b.deadLetters),
                b.compensation, b.compensationAttempts, b.clock, b.ticker, b.onOutcome);
    }

    /**
     * The claim store as the processor uses it: with an {@link EffectLedger} (which remembers effects
     * and dead letters, like the JDBC ledger) its guarded view, whose done window may be shorter
     * since the ledger keeps both single beyond it; else the store itself (Redis-only mode, or a plain
     * check, which remembers no dead letter: the store's window is what keeps one from being repeated).
     */
    static ClaimStore claimsOf(IdempotentProcessor.Builder<?> b) {
        ClaimStore claims = set(b.claims);
        return b.dedupCheck instanceof EffectLedger<?> ? claims.guarded().orElse(claims) : claims;
    }

    /** A required setting of the builder, which its checks have found set. */
    static <V> V set(@Nullable V value) {
        return Objects.requireNonNull(value, "a required setting was not checked");
    }
}
