package dev.idem.sample.inventory;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micronaut.context.annotation.Factory;
import jakarta.inject.Singleton;

/**
 * A Micrometer registry, so Idem records its meters ({@code idem.outcomes} and the rest); an
 * application with micronaut-micrometer would export them instead.
 */
@Factory
final class Meters {

    @Singleton
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }
}
