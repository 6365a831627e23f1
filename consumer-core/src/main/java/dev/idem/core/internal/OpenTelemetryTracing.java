package dev.idem.core.internal;

import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Outcome;
import dev.idem.core.TraceKeys;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerBuilder;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Idem's spans in OpenTelemetry: one {@code process <topic>} span per message run (the messaging
 * conventions' attributes and Idem's own), child spans for the business check, the handler, the
 * dead letter and the compensation, and a span per batch claim and completion. Loaded only when the
 * application passed an {@code OpenTelemetry}. Thread-safe.
 */
public final class OpenTelemetryTracing implements Tracing {

    /** The instrumentation scope of Idem's spans. */
    public static final String SCOPE = "dev.idem";
    /** MDC names of the current message's trace and span, as OpenTelemetry's own log instrumentation names them. */
    public static final String MDC_TRACE_ID = "trace_id";
    public static final String MDC_SPAN_ID = "span_id";
    private static final AttributeKey<String> LINK = AttributeKey.stringKey("idem.link");
    private static final Logger LOG = LoggerFactory.getLogger(OpenTelemetryTracing.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    private static final TextMapGetter<Map<String, String>> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public @Nullable String get(@Nullable Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final String group;
    private final TraceKeys keys;

    /**
     * @param openTelemetry an {@code io.opentelemetry.api.OpenTelemetry}, typed loosely so the API
     *                      stays optional for applications that do not trace
     */
    public OpenTelemetryTracing(Object openTelemetry, String group, TraceKeys keys) {
        OpenTelemetry otel = (OpenTelemetry) openTelemetry;
        TracerBuilder builder = otel.tracerBuilder(SCOPE);
        String version = OpenTelemetryTracing.class.getPackage().getImplementationVersion();
        this.tracer = (version == null ? builder : builder.setInstrumentationVersion(version)).build();
        TextMapPropagator configured = otel.getPropagators().getTextMapPropagator();
        // An SDK built without propagators reads nothing: the W3C headers are what producers write.
        this.propagator = configured.fields().isEmpty() ? W3CTraceContextPropagator.getInstance() : configured;
        this.group = group;
        this.keys = keys;
    }

    @Override
    public Step claim(int messages) {
        try {
            return claimSpan(messages);
        } catch (RuntimeException e) {
            return untraced(e);
        }
    }

    private Step claimSpan(int messages) {
        Span span = tracer.spanBuilder("idem claim").setSpanKind(SpanKind.INTERNAL)
                .setAttribute("messaging.consumer.group.name", group)
                .setAttribute("messaging.batch.message_count", (long) messages).startSpan();
        return new OtelStep(span, null, true);
    }

    @Override
    public Step completion(Step claim, int keys) {
        try {
            return completionSpan(claim, keys);
        } catch (RuntimeException e) {
            return untraced(e);
        }
    }

    private Step completionSpan(Step claim, int keys) {
        SpanBuilder builder = tracer.spanBuilder("idem complete").setSpanKind(SpanKind.INTERNAL)
                .setAttribute("messaging.consumer.group.name", group).setAttribute("idem.keys", (long) keys);
        if (claim instanceof OtelStep step) {
            builder.setParent(Context.root().with(step.span));
        }
        return new OtelStep(builder.startSpan(), null, true);
    }

    @Override
    public Step message(Envelope envelope, IdempotencyKey key, Step claim) {
        try {
            return messageSpan(envelope, key, claim);
        } catch (RuntimeException e) {
            // A propagator failing on a malformed header must not stop the message.
            return untraced(e);
        }
    }

    private Step messageSpan(Envelope envelope, IdempotencyKey key, Step claim) {
        Context ambient = Context.current();
        Context extracted = propagator.extract(Context.root(), envelope.headers(), HEADERS);
        SpanContext producer = Span.fromContext(extracted).getSpanContext();
        SpanBuilder builder = tracer.spanBuilder("process " + envelope.topic()).setSpanKind(SpanKind.CONSUMER);
        if (Span.fromContext(ambient).getSpanContext().isValid()) {
            // The client is traced itself: nest under its span, and link to the producer's.
            builder.setParent(ambient);
            if (producer.isValid()) {
                builder.addLink(producer, Attributes.of(LINK, "producer"));
            }
        } else if (producer.isValid()) {
            builder.setParent(extracted);   // with the producer's baggage
        } else {
            builder.setNoParent();
        }
        if (claim instanceof OtelStep step) {
            builder.addLink(step.span.getSpanContext(), Attributes.of(LINK, "claim"));
        }
        String replayOf = envelope.headers().get(DeadLetterHeaders.REPLAY_OF);
        if (replayOf != null) {
            SpanContext original = Span.fromContext(W3CTraceContextPropagator.getInstance().extract(Context.root(),
                    Map.of("traceparent", replayOf), HEADERS)).getSpanContext();
            if (original.isValid()) {
                builder.addLink(original, Attributes.of(LINK, "replay-of"));
                builder.setAttribute("idem.replay", true);
            }
        }
        builder.setAttribute("messaging.operation.name", "process")
                .setAttribute("messaging.operation.type", "process")
                .setAttribute("messaging.destination.name", envelope.topic())
                .setAttribute("messaging.consumer.group.name", group)
                .setAttribute("messaging.message.id", envelope.messageId());
        String system = system(envelope);
        if (system != null) {
            builder.setAttribute("messaging.system", system);
        }
        if (envelope.partition() >= 0) {
            builder.setAttribute("messaging.destination.partition.id", Integer.toString(envelope.partition()));
        }
        if ("kafka".equals(system)) {
            try {
                builder.setAttribute("messaging.kafka.offset", Long.parseLong(envelope.position()));
            } catch (NumberFormatException notAnOffset) {
                // A hand-made envelope: no offset attribute.
            }
        }
        if (envelope.brokerAttempt() > 0) {
            builder.setAttribute("idem.broker_attempt", (long) envelope.brokerAttempt());
        }
        String keyAttribute = keys.attribute(key);
        if (keyAttribute != null) {
            builder.setAttribute("idem.key", keyAttribute);
        }
        Span span = builder.startSpan();
        return new MessageStep(span, span.makeCurrent());
    }

    @Override
    public Step step(String name) {
        try {
            Span span = tracer.spanBuilder(name).setSpanKind(SpanKind.INTERNAL).startSpan();
            return new OtelStep(span, span.makeCurrent(), true);
        } catch (RuntimeException e) {
            return untraced(e);
        }
    }

    @Override
    public Step current() {
        Span span = Span.current();
        return span.getSpanContext().isValid() ? new OtelStep(span, null, false) : Step.NONE;
    }

    /** The current run's context where it is sampled: an unsampled one names a trace the backend never got. */
    @Override
    public @Nullable String traceParent() {
        SpanContext context = Span.current().getSpanContext();
        return context.isValid() && context.isSampled() ? traceParent(context) : null;
    }

    /** Tracing failed (a propagator, an exporter's span processor): the message goes on untraced; logged once. */
    static Step untraced(RuntimeException failure) {
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("tracing failed; messages are processed as before, untraced where it fails (logged once)", failure);
        }
        return Step.NONE;
    }

    /** {@code context} as a W3C {@code traceparent} header value. */
    static String traceParent(SpanContext context) {
        return "00-" + context.getTraceId() + "-" + context.getSpanId() + "-" + context.getTraceFlags().asHex();
    }

    /** The broker, told by the class of its own message: the core depends on neither client. */
    private static @Nullable String system(Envelope envelope) {
        Object source = envelope.source();
        if (source == null) {
            return null;
        }
        String type = source.getClass().getName();
        return type.startsWith("org.apache.kafka.") ? "kafka" : type.startsWith("org.apache.rocketmq.") ? "rocketmq" : null;
    }

    /** A span, current on its thread or not, ended by {@link #close()} when it is this step's own. */
    private static class OtelStep implements Step {

        final Span span;
        private final @Nullable Scope scope;
        private final boolean owned;

        OtelStep(Span span, @Nullable Scope scope, boolean owned) {
            this.span = span;
            this.scope = scope;
            this.owned = owned;
        }

        @Override
        public Step attribute(String name, long value) {
            return guarded(() -> span.setAttribute(name, value));
        }

        @Override
        public Step attribute(String name, String value) {
            return guarded(() -> span.setAttribute(name, value));
        }

        @Override
        public Step attribute(String name, boolean value) {
            return guarded(() -> span.setAttribute(name, value));
        }

        @Override
        public Step event(String name, String attribute, String value) {
            return guarded(() -> span.addEvent(name, Attributes.of(AttributeKey.stringKey(attribute), value)));
        }

        @Override
        public Step outcome(Outcome outcome) {
            return guarded(() -> describe(outcome));
        }

        private void describe(Outcome outcome) {
            span.setAttribute("idem.outcome", outcome.getClass().getSimpleName().toLowerCase(Locale.ROOT));
            if (outcome instanceof Outcome.Applied applied) {
                span.setAttribute("idem.attempt", (long) applied.attempt());
                span.setAttribute("idem.fence", applied.fence());
                if (applied.leaseLost()) {
                    span.setAttribute("idem.lease_lost", true);
                }
            } else if (outcome instanceof Outcome.Duplicate duplicate) {
                span.setAttribute("idem.reason", duplicate.reason());
            } else if (outcome instanceof Outcome.Busy busy) {
                span.setAttribute("idem.retry_after_ms", busy.retryAfter().toMillis());
            } else if (outcome instanceof Outcome.Retrying retrying) {
                span.setAttribute("idem.attempt", (long) retrying.attempt());
                span.recordException(retrying.cause());
                span.setStatus(StatusCode.ERROR, retrying.cause().getClass().getName());
            } else if (outcome instanceof Outcome.Deferred deferred) {
                span.setAttribute("idem.reason", deferred.reason());
                if (deferred.cause() != null) {
                    span.recordException(deferred.cause());
                }
                span.setStatus(StatusCode.ERROR, "deferred: " + deferred.reason());
            } else if (outcome instanceof Outcome.DeadLettered dead) {
                span.setAttribute("idem.reason", dead.reason());
                if (!dead.earlier()) {
                    span.setAttribute("idem.attempt", (long) dead.attempts());
                    span.setStatus(StatusCode.ERROR, "dead-lettered: " + dead.reason());
                }
            }
        }

        @Override
        public Step failed(Throwable failure) {
            return guarded(() -> {
                span.recordException(failure);
                span.setStatus(StatusCode.ERROR, failure.getClass().getName());
            });
        }

        @Override
        public void close() {
            try {
                if (scope != null) {
                    scope.close();
                }
            } finally {
                if (owned) {
                    guarded(span::end);
                }
            }
        }

        /** Records on the span; a failure of the tracer's never reaches the message's run. */
        private Step guarded(Runnable record) {
            try {
                record.run();
            } catch (RuntimeException e) {
                untraced(e);
            }
            return this;
        }
    }

    /** A message's span: current on its thread, with its ids in the MDC for the handler's logs. */
    private static final class MessageStep extends OtelStep {

        private final @Nullable String traceIdBefore = MDC.get(MDC_TRACE_ID);
        private final @Nullable String spanIdBefore = MDC.get(MDC_SPAN_ID);

        MessageStep(Span span, Scope scope) {
            super(span, scope, true);
            MDC.put(MDC_TRACE_ID, span.getSpanContext().getTraceId());
            MDC.put(MDC_SPAN_ID, span.getSpanContext().getSpanId());
        }

        @Override
        public void close() {
            restore(MDC_TRACE_ID, traceIdBefore);
            restore(MDC_SPAN_ID, spanIdBefore);
            super.close();
        }

        private static void restore(String name, @Nullable String value) {
            if (value == null) {
                MDC.remove(name);
            } else {
                MDC.put(name, value);
            }
        }
    }
}
