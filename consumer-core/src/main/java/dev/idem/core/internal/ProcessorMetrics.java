package dev.idem.core.internal;

import dev.idem.core.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Idem's meters: {@code idem.outcomes} per outcome and topic, {@code idem.claim} and
 * {@code idem.handler} timers, and counters for the failures operators must see
 * ({@code idem.claimstore.unavailable}, {@code idem.deadletter.publish.failures},
 * {@code idem.lease.lost}, {@code idem.compensation.failures}). Thread-safe.
 */
public final class ProcessorMetrics {

    private final MeterRegistry registry;
    private final String group;
    // Per topic, per outcome type: looked up for every message, so no key is built per call.
    private final Map<String, Map<Class<?>, Counter>> outcomes = new ConcurrentHashMap<>();
    private final Timer claimTimer;
    private final Timer handlerTimer;
    private final Counter storeUnavailable;
    private final Counter publishFailures;
    private final Counter leaseLost;
    private final Counter compensationFailures;

    /**
     * @param registry where meters go
     * @param group    consumer group, a tag on every meter
     */
    public ProcessorMetrics(MeterRegistry registry, String group) {
        this.registry = registry;
        this.group = group;
        this.claimTimer = Timer.builder("idem.claim").description("claim round trips").tag("group", group)
                .publishPercentiles(0.5, 0.99).register(registry);
        this.handlerTimer = Timer.builder("idem.handler").description("handler calls").tag("group", group)
                .publishPercentiles(0.5, 0.99).register(registry);
        this.storeUnavailable = counter("idem.claimstore.unavailable");
        this.publishFailures = counter("idem.deadletter.publish.failures");
        this.leaseLost = counter("idem.lease.lost");
        this.compensationFailures = counter("idem.compensation.failures");
    }

    private Counter counter(String name) {
        return Counter.builder(name).tag("group", group).register(registry);
    }

    /** Counts an outcome. */
    public void outcome(String topic, Outcome outcome) {
        outcomes.computeIfAbsent(topic, t -> new ConcurrentHashMap<>())
                .computeIfAbsent(outcome.getClass(), type -> Counter.builder("idem.outcomes").tag("group", group)
                        .tag("topic", topic).tag("outcome", type.getSimpleName().toLowerCase(Locale.ROOT))
                        .register(registry))
                .increment();
    }

    Timer claimTimer() {
        return claimTimer;
    }

    Timer handlerTimer() {
        return handlerTimer;
    }

    void storeUnavailable() {
        storeUnavailable.increment();
    }

    void publishFailed() {
        publishFailures.increment();
    }

    void leaseLost(int count) {
        leaseLost.increment(count);
    }

    void compensationFailed() {
        compensationFailures.increment();
    }
}
