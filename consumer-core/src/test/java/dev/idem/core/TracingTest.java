package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** Idem's spans, exported to the OpenTelemetry SDK's in-memory exporter: their tree, links and attributes. */
class TracingTest extends ProcessorFixture {

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    private final Tracer producerTracer = otel.getTracer("test-producer");
    private final List<String> seenInHandler = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        otel.close();
    }

    @Test
    void aMessageRunsUnderItsProducersTraceWithTheHandlersOwnSpansBelowIdems() {
        SpanContext producer = produced();
        DeliveryHandler<String> tracedHandler = delivery -> {
            seenInHandler.add(MDC.get("trace_id"));
            Span own = otel.getTracer("app").spanBuilder("reserve stock").startSpan();
            own.end();
        };
        try (IdempotentProcessor<String> processor = builder(tracedHandler).openTelemetry(otel).build()) {
            assertThat(processor.process(envelope("order-1", producer))).isInstanceOf(Outcome.Applied.class);
        }

        SpanData process = span("process orders");
        assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(process.getTraceId()).isEqualTo(producer.getTraceId());
        assertThat(process.getParentSpanId()).isEqualTo(producer.getSpanId());
        assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.destination.name"))).isEqualTo("orders");
        assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.consumer.group.name"))).isEqualTo("inventory");
        assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.destination.partition.id"))).isEqualTo("0");
        assertThat(process.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("applied");
        assertThat(process.getAttributes().get(AttributeKey.longKey("idem.attempt"))).isEqualTo(1L);
        assertThat(process.getAttributes().get(AttributeKey.longKey("idem.fence"))).isPositive();
        assertThat(process.getAttributes().get(AttributeKey.stringKey("idem.key"))).as("keys are off by default").isNull();
        assertThat(process.getEvents()).anySatisfy(e -> assertThat(e.getName()).isEqualTo("idem.claimed"));
        SpanData claim = span("idem claim");
        assertThat(process.getLinks()).extracting(LinkData::getSpanContext).contains(claim.getSpanContext());

        SpanData handler = span("idem handler");
        assertThat(handler.getParentSpanId()).isEqualTo(process.getSpanId());
        assertThat(span("reserve stock").getParentSpanId()).as("the handler's own span is a child").isEqualTo(handler.getSpanId());
        assertThat(seenInHandler).containsExactly(producer.getTraceId());
        assertThat(MDC.get("trace_id")).as("the MDC is cleared after the run").isNull();
        assertThat(span("idem complete").getParentSpanId()).isEqualTo(claim.getSpanId());
    }

    @Test
    void aPoisonMessagesDeadLetterCarriesTheFailingRunsContextAndItsCompensationIsTraced() {
        SpanContext producer = produced();
        try (IdempotentProcessor<String> processor = builder(handler).openTelemetry(otel).build()) {
            for (int delivery = 0; delivery < 5; delivery++) {
                processor.process(envelope("order-1:fail", producer));
            }
        }

        List<SpanData> runs = spans("process orders");
        assertThat(runs).hasSize(5).allSatisfy(run -> {
            assertThat(run.getTraceId()).isEqualTo(producer.getTraceId());
            assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        });
        assertThat(runs.subList(0, 4)).allSatisfy(run -> {
            assertThat(run.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("retrying");
            assertThat(run.getEvents()).anySatisfy(e -> assertThat(e.getName()).isEqualTo("exception"));
        });
        SpanData last = runs.get(4);
        assertThat(last.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("deadlettered");
        assertThat(last.getAttributes().get(AttributeKey.longKey("idem.attempt"))).isEqualTo(5L);
        DeadLetter letter = deadLetters.published().get(0);
        assertThat(letter.traceParent()).isEqualTo("00-" + last.getTraceId() + "-" + last.getSpanId() + "-01");
        assertThat(letter.idemHeaders()).containsEntry(DeadLetterHeaders.TRACE_PARENT, letter.traceParent());
        assertThat(span("idem dead letter").getParentSpanId()).isEqualTo(last.getSpanId());
        assertThat(span("idem compensation").getParentSpanId()).isEqualTo(last.getSpanId());
        assertThat(compensated).hasSize(1);
    }

    @Test
    void aReplayedMessageLinksToTheRunThatDeadLetteredIt() {
        String failing = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        try (IdempotentProcessor<String> processor = builder(handler).openTelemetry(otel).build()) {
            processor.process(new Envelope("orders", 0, "8", "orders-0@8", 1,
                    Map.of("traceparent", failing, DeadLetterHeaders.REPLAY_OF, failing), bytes("order-2")));
        }

        SpanData run = span("process orders");
        assertThat(run.getTraceId()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(run.getAttributes().get(AttributeKey.booleanKey("idem.replay"))).isTrue();
        assertThat(run.getLinks()).anySatisfy(link -> {
            assertThat(link.getSpanContext().getSpanId()).isEqualTo("b7ad6b7169203331");
            assertThat(link.getAttributes().get(AttributeKey.stringKey("idem.link"))).isEqualTo("replay-of");
        });
    }

    @Test
    void whereTheClientIsTracedItsSpanIsTheParentAndTheProducerIsLinked() {
        SpanContext producer = produced();
        Span client = producerTracer.spanBuilder("orders receive").setSpanKind(SpanKind.CONSUMER).startSpan();
        try (IdempotentProcessor<String> processor = builder(handler).openTelemetry(otel).build();
             Scope ignored = client.makeCurrent()) {
            processor.process(envelope("order-3", producer));
        } finally {
            client.end();
        }

        SpanData run = span("process orders");
        assertThat(run.getParentSpanId()).isEqualTo(client.getSpanContext().getSpanId());
        assertThat(run.getLinks()).extracting(link -> link.getSpanContext().getSpanId()).contains(producer.getSpanId());
    }

    @Test
    void keysAreOnSpansOnlyWhenAskedHashedOrPlain() {
        try (IdempotentProcessor<String> hashed = builder(handler).openTelemetry(otel).traceKeys(TraceKeys.HASHED).build()) {
            hashed.process(envelope("order-4"));
        }
        assertThat(span("process orders").getAttributes().get(AttributeKey.stringKey("idem.key")))
                .isEqualTo(TraceKeys.hash(new IdempotencyKey("inventory", "orders", "order-4")))
                .hasSize(16).doesNotContain("order-4");
        exporter.reset();
        try (IdempotentProcessor<String> plain = builder(handler).openTelemetry(otel).traceKeys(TraceKeys.PLAIN).build()) {
            plain.process(envelope("order-4"));
        }
        assertThat(span("process orders").getAttributes().get(AttributeKey.stringKey("idem.key"))).isEqualTo("order-4");
    }

    @Test
    void withoutATracerNothingIsTracedAndTheDeadLetterHasNoContext() {
        SpanContext producer = produced();
        exporter.reset();
        try (IdempotentProcessor<String> processor = builder(handler).maxAttempts(1).build()) {
            processor.process(envelope("order-5:fail", producer));
        }
        assertThat(exporter.getFinishedSpanItems()).isEmpty();
        assertThat(deadLetters.published().get(0).traceParent()).isEmpty();
        assertThat(deadLetters.published().get(0).idemHeaders()).doesNotContainKey(DeadLetterHeaders.TRACE_PARENT);
    }

    @Test
    void aTracerThatThrowsNeverStopsAMessage() {
        TextMapPropagator broken = new TextMapPropagator() {
            @Override
            public Collection<String> fields() {
                return List.of("traceparent");
            }

            @Override
            public <C> void inject(Context context, C carrier, TextMapSetter<C> setter) {
            }

            @Override
            public <C> Context extract(Context context, C carrier, TextMapGetter<C> getter) {
                throw new IllegalArgumentException("malformed traceparent");
            }
        };
        OpenTelemetrySdk brokenOtel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(broken)).build();
        try (IdempotentProcessor<String> processor = builder(handler).openTelemetry(brokenOtel).build()) {
            assertThat(processor.process(envelope("order-6"))).isInstanceOf(Outcome.Applied.class);
        } finally {
            brokenOtel.close();
        }
        assertThat(handled).hasValue(1);
        assertThat(spans("process orders")).as("the run went on untraced").isEmpty();
    }

    @Test
    void aDeadLetterOfAnUnsampledRunNamesNoTrace() {
        SpanContext unsampled = SpanContext.createFromRemoteParent("0af7651916cd43dd8448eb211c80319c",
                "b7ad6b7169203331", TraceFlags.getDefault(), TraceState.getDefault());
        try (IdempotentProcessor<String> processor = builder(handler).maxAttempts(1).openTelemetry(otel).build()) {
            processor.process(envelope("order-7:fail", unsampled));
        }
        assertThat(deadLetters.published().get(0).traceParent()).isEmpty();
    }

    /** A producer's span, ended, as the W3C headers of the message it sent carry it. */
    private SpanContext produced() {
        Span send = producerTracer.spanBuilder("orders publish").setSpanKind(SpanKind.PRODUCER).startSpan();
        send.end();
        return send.getSpanContext();
    }

    private Envelope envelope(String body, SpanContext producer) {
        Map<String, String> headers = new HashMap<>();
        otel.getPropagators().getTextMapPropagator().inject(Context.root().with(Span.wrap(producer)), headers,
                (carrier, name, value) -> carrier.put(name, value));
        return new Envelope("orders", 0, "7", "orders-0@7", 1, headers, bytes(body));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private SpanData span(String name) {
        List<SpanData> found = spans(name);
        assertThat(found).as("spans named '%s' in %s", name, exporter.getFinishedSpanItems()).hasSize(1);
        return found.get(0);
    }

    private List<SpanData> spans(String name) {
        return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
    }
}
