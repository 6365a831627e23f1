package dev.idem.core.outbox;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.time.Instant;

/**
 * The relay's meters in Micrometer, tagged with the outbox's table: the counters
 * {@code idem.outbox.published}, {@code idem.outbox.retried} and {@code idem.outbox.dead.lettered}
 * (this relay's), and the gauges {@code idem.outbox.backlog}, {@code idem.outbox.dead} and
 * {@code idem.outbox.oldest.unsent.age} (seconds; the whole table's, as the relay last read it).
 * Loaded only when a registry is given, so Micrometer stays optional.
 */
final class OutboxMeters {

    private OutboxMeters() {
    }

    static void bind(Object meterRegistry, OutboxRelay relay, String table) {
        MeterRegistry registry = (MeterRegistry) meterRegistry;
        Tags tags = Tags.of("table", table);
        FunctionCounter.builder("idem.outbox.published", relay, OutboxRelay::published).tags(tags)
                .description("outbox rows this relay published").register(registry);
        FunctionCounter.builder("idem.outbox.retried", relay, OutboxRelay::retried).tags(tags)
                .description("publications that failed and are tried again (the broker unreachable)").register(registry);
        FunctionCounter.builder("idem.outbox.dead.lettered", relay, OutboxRelay::deadLettered).tags(tags)
                .description("rows this relay sent to the dead state").register(registry);
        Gauge.builder("idem.outbox.backlog", relay, r -> r.lastStatus().map(OutboxStatus::backlog).orElse(0L))
                .tags(tags).description("committed rows not yet published").register(registry);
        Gauge.builder("idem.outbox.dead", relay, r -> r.lastStatus().map(OutboxStatus::dead).orElse(0L))
                .tags(tags).description("rows in the dead state").register(registry);
        Gauge.builder("idem.outbox.oldest.unsent.age", relay, r -> r.lastStatus()
                        .flatMap(status -> status.oldestUnsentAge(Instant.now())).map(Duration::toMillis).orElse(0L)
                        / 1000.0)
                .tags(tags).baseUnit("seconds").description("how long the oldest unsent row has waited").register(registry);
    }
}
