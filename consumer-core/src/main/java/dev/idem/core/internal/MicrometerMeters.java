package dev.idem.core.internal;

import dev.idem.core.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Idem's meters in Micrometer, every one tagged with the consumer group: {@code idem.outcomes}
 * (tags topic, outcome), the timers {@code idem.claim} and {@code idem.handler} (histograms, so
 * percentiles are computed where the registry aggregates them), and the counters
 * {@code idem.claimstore.unavailable}, {@code idem.deadletter.publish.failures},
 * {@code idem.lease.lost}, {@code idem.compensation.failures}, and the gauge
 * {@code idem.deferral.oldest.age} (seconds the key deferred longest in a row has been). Thread-safe.
 */
public final class MicrometerMeters implements Meters {

    private final MeterRegistry registry;
    private final Tags tags;
    // Per topic, per outcome type: looked up for every message, so no key is built per call.
    private final Map<String, Map<Class<?>, Counter>> outcomes = new ConcurrentHashMap<>();
    private final Timer claimTimer;
    private final Timer handlerTimer;
    private final Counter storeUnavailable;
    private final Counter publishFailures;
    private final Counter leaseLost;
    private final Counter compensationFailures;

    /**
     * @param registry a Micrometer {@code MeterRegistry}, typed loosely so that this class is the
     *                 only one that needs Micrometer on the class path
     * @param group    consumer group, a tag on every meter
     * @param extra    more tags on every meter (key to value)
     */
    public MicrometerMeters(Object registry, String group, Map<String, String> extra) {
        this.registry = (MeterRegistry) registry;
        Tags all = Tags.of("group", group);
        for (Map.Entry<String, String> tag : extra.entrySet()) {
            all = all.and(tag.getKey(), tag.getValue());
        }
        this.tags = all;
        this.claimTimer = Timer.builder("idem.claim").description("claim round trips").tags(tags)
                .publishPercentileHistogram().register(this.registry);
        this.handlerTimer = Timer.builder("idem.handler").description("handler calls").tags(tags)
                .publishPercentileHistogram().register(this.registry);
        this.storeUnavailable = counter("idem.claimstore.unavailable");
        this.publishFailures = counter("idem.deadletter.publish.failures");
        this.leaseLost = counter("idem.lease.lost");
        this.compensationFailures = counter("idem.compensation.failures");
    }

    @Override
    public void oldestDeferral(Supplier<Duration> age) {
        Gauge.builder("idem.deferral.oldest.age", () -> age.get().toMillis() / 1000.0).baseUnit("seconds")
                .description("how long the key deferred longest in a row has been deferred").tags(tags)
                .strongReference(true).register(registry);
    }

    private Counter counter(String name) {
        return Counter.builder(name).tags(tags).register(registry);
    }

    @Override
    public void outcome(String topic, Outcome outcome) {
        outcomes.computeIfAbsent(topic, t -> new ConcurrentHashMap<>())
                .computeIfAbsent(outcome.getClass(), type -> Counter.builder("idem.outcomes").tags(tags)
                        .tag("topic", topic).tag("outcome", type.getSimpleName().toLowerCase(Locale.ROOT))
                        .register(registry))
                .increment();
    }

    @Override
    public <R> R claim(Callable<R> call) throws Exception {
        return claimTimer.recordCallable(call);
    }

    @Override
    public void handler(Callable<Void> call) throws Exception {
        handlerTimer.recordCallable(call);
    }

    @Override
    public void storeUnavailable() {
        storeUnavailable.increment();
    }

    @Override
    public void publishFailed() {
        publishFailures.increment();
    }

    @Override
    public void leaseLost(int count) {
        leaseLost.increment(count);
    }

    @Override
    public void compensationFailed() {
        compensationFailures.increment();
    }
}
