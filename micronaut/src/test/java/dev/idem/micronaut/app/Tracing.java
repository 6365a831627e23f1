package dev.idem.micronaut.app;

import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Requires;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import jakarta.inject.Singleton;

/**
 * The application's OpenTelemetry, as micronaut-tracing-opentelemetry or the application itself
 * provides one, exporting to memory: nothing in it is Idem's.
 */
@Factory
@Requires(property = "test.tracing")
public class Tracing {

    @Singleton
    InMemorySpanExporter exporter() {
        return InMemorySpanExporter.create();
    }

    @Singleton
    @Bean(preDestroy = "close")
    OpenTelemetrySdk openTelemetry(InMemorySpanExporter exporter) {
        return OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
    }
}
