package dev.idem.listener;

import dev.idem.core.Backoff;
import dev.idem.core.Compensation;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.spi.ClaimStore;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a listener into its processor builder, the one way for both integrations and for declared
 * and wrapped listeners alike: on the ledger when the listener wants it and the application has one
 * (its compensation then commits with the ledger's record of it), else in Redis-only mode; the claim
 * store, codec and keys; every processor setting the spec sets, and nothing it leaves unset.
 */
public final class ListenerProcessors {

    private static final Logger LOG = LoggerFactory.getLogger(ListenerProcessors.class);

    private ListenerProcessors() {
    }

    /**
     * The listener's processor builder, ready for the framework's meters and tracer and then its
     * consumer.
     *
     * @param ledger the application's ledger, or null when it has none
     * @throws IllegalArgumentException naming the listener and the setting when it cannot run as declared
     */
    public static IdempotentProcessor.Builder<Object> processor(ListenerSpec spec, ClaimStore claims,
                                                               @Nullable JdbcEffectLedger ledger) {
        JdbcEffectLedger used = spec.ledger() ? ledger : null;
        ListenerHandler handler = spec.handler();
        IdempotentProcessor.Builder<Object> processor;
        if (used != null) {
            processor = used.processor(handler::invoke);
        } else {
            if (handler.wantsConnection()) {
                throw new IllegalArgumentException("Idem listener " + spec.where() + " takes a Connection, which only "
                        + "the ledger's transaction gives: add a DataSource or drop the parameter");
            }
            processor = IdempotentProcessor.<Object>builder(delivery -> handler.invoke(delivery, null))
                    .dedupCheck(DedupCheck.none());
            // Said for every listener, declared or wrapped: Redis-only is a promise of its own.
            LOG.info("Idem listener '{}' runs in Redis-only mode ({})", spec.name(), !spec.ledger()
                    ? "ledger = false" : "the application has no ledger");
        }
        processor.claims(claims).codec(spec.codec()).keys(spec.keys());
        configure(processor, spec);
        Compensation compensation = spec.compensation();
        if (compensation != null) {
            processor.compensation(used != null
                    ? used.compensation((letter, tx) -> compensation.compensate(letter)) : compensation);
        }
        return processor;
    }

    /**
     * Sets on {@code processor} every processor setting the spec sets (attempts, lease, backoff,
     * deferral bound, compensation tries, exceptions never retried or deferred as infrastructure); a
     * backoff set in part takes the rest from the default's.
     *
     * @throws IllegalArgumentException naming the backoff's settings when they do not make a backoff
     */
    public static void configure(IdempotentProcessor.Builder<?> processor, ListenerSpec spec) {
        spec.get(ListenerSetting.MAX_ATTEMPTS).ifPresent(processor::maxAttempts);
        spec.get(ListenerSetting.LEASE).ifPresent(processor::lease);
        spec.get(ListenerSetting.MAX_DEFERRAL).ifPresent(processor::maxDeferral);
        spec.get(ListenerSetting.COMPENSATION_ATTEMPTS).ifPresent(processor::compensationAttempts);
        backoff(spec).ifPresent(processor::backoff);
        spec.get(ListenerSetting.FATAL_EXCEPTIONS).ifPresent(types -> processor.fatal(throwables(types)));
        spec.get(ListenerSetting.INFRASTRUCTURE_EXCEPTIONS).ifPresent(types -> processor.infrastructure(throwables(types)));
    }

    @SuppressWarnings("unchecked")
    private static Class<? extends Throwable>[] throwables(Class<?>[] checked) {
        // ListenerSetting checked each is a Throwable when the spec took it.
        return (Class<? extends Throwable>[]) checked;
    }

    /** The dead-letter topic the spec sets, when it sets one that is not blank; else the broker's default applies. */
    public static Optional<DeadLetterRouting> deadLetterRouting(ListenerSpec spec) {
        return spec.get(ListenerSetting.DEAD_LETTER_TOPIC).filter(topic -> !topic.isBlank()).map(DeadLetterRouting::fixed);
    }

    private static Optional<Backoff> backoff(ListenerSpec spec) {
        Optional<Duration> initial = spec.get(ListenerSetting.BACKOFF_INITIAL);
        Optional<Duration> max = spec.get(ListenerSetting.BACKOFF_MAX);
        Optional<Double> jitter = spec.get(ListenerSetting.BACKOFF_JITTER);
        if (initial.isEmpty() && max.isEmpty() && jitter.isEmpty()) {
            return Optional.empty();
        }
        try {
            // A first delay set above the default's largest one, with no largest set, is its own largest.
            return Optional.of(Backoff.exponential(initial.orElse(Backoff.DEFAULT_INITIAL),
                    max.orElse(initial.filter(i -> i.compareTo(Backoff.DEFAULT_MAX) > 0).orElse(Backoff.DEFAULT_MAX)),
                    jitter.orElse(Backoff.DEFAULT_JITTER)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(spec.settings() + ".backoff-* (" + String.join(", ",
                    spec.origin(ListenerSetting.BACKOFF_INITIAL), spec.origin(ListenerSetting.BACKOFF_MAX),
                    spec.origin(ListenerSetting.BACKOFF_JITTER)) + "): " + e.getMessage(), e);
        }
    }
}
