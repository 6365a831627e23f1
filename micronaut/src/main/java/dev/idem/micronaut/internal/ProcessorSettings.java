package dev.idem.micronaut.internal;

import dev.idem.core.Backoff;
import dev.idem.core.IdempotentProcessor;
import io.micronaut.context.exceptions.ConfigurationException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * The processor settings a listener or an {@code @Idempotent} method takes from its properties
 * alone (no annotation member): the retry backoff, the bound of infrastructure deferrals and the
 * compensation's tries. Unset ones keep the processor's defaults.
 */
public final class ProcessorSettings {

    /** The property keys, under a listener's or a method's prefix. */
    public static final Set<String> KEYS = Set.of("backoff-initial", "backoff-max", "backoff-jitter", "max-deferral",
            "compensation-attempts");

    // The processor's own defaults (IdempotentProcessor.Builder), for the parts of a backoff left unset.
    private static final Duration INITIAL = Duration.ofSeconds(1);
    private static final Duration MAX = Duration.ofMinutes(1);
    private static final double JITTER = 0.2;

    private final Optional<Backoff> backoff;
    private final Optional<Duration> maxDeferral;
    private final Optional<Integer> compensationAttempts;

    private ProcessorSettings(Optional<Backoff> backoff, Optional<Duration> maxDeferral,
                              Optional<Integer> compensationAttempts) {
        this.backoff = backoff;
        this.maxDeferral = maxDeferral;
        this.compensationAttempts = compensationAttempts;
    }

    /**
     * Reads the settings under {@code prefix} (ending with a dot).
     *
     * @throws ConfigurationException naming the property that is wrong
     */
    public static ProcessorSettings read(Settings settings, String prefix) {
        Optional<Duration> initial = settings.optionalDuration(prefix + "backoff-initial");
        Optional<Duration> max = settings.optionalDuration(prefix + "backoff-max");
        Optional<Double> jitter = settings.optionalDecimal(prefix + "backoff-jitter");
        Optional<Backoff> backoff = Optional.empty();
        if (initial.isPresent() || max.isPresent() || jitter.isPresent()) {
            try {
                backoff = Optional.of(Backoff.exponential(initial.orElse(INITIAL),
                        max.orElse(initial.filter(i -> i.compareTo(MAX) > 0).orElse(MAX)), jitter.orElse(JITTER)));
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(prefix + "backoff-*: " + e.getMessage(), e);
            }
        }
        Optional<Duration> maxDeferral = settings.optionalDuration(prefix + "max-deferral");
        Optional<Integer> attempts = settings.optionalInt(prefix + "compensation-attempts");
        attempts.filter(n -> n < 1).ifPresent(n -> {
            throw new ConfigurationException(prefix + "compensation-attempts must be >= 1 but was " + n);
        });
        return new ProcessorSettings(backoff, maxDeferral, attempts);
    }

    /** Sets what was configured on {@code processor}. */
    public void applyTo(IdempotentProcessor.Builder<?> processor) {
        backoff.ifPresent(processor::backoff);
        maxDeferral.ifPresent(processor::maxDeferral);
        compensationAttempts.ifPresent(processor::compensationAttempts);
    }
}
