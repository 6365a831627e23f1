package dev.idem.core.outbox;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import org.jspecify.annotations.Nullable;

/**
 * The sending thread's trace context as a W3C {@code traceparent}, read from OpenTelemetry's current
 * span when the OpenTelemetry API is on the class path (a handler runs inside Idem's handler span),
 * so the trace continues into the next service. Without the API, or outside a sampled span, none.
 */
final class OutboxTrace {

    private static final boolean PRESENT = present();

    private OutboxTrace() {
    }

    static @Nullable String current() {
        return PRESENT ? Current.traceParent() : null;
    }

    private static boolean present() {
        try {
            Class.forName("io.opentelemetry.api.trace.Span", false, OutboxTrace.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Loaded only when the OpenTelemetry API is there. */
    private static final class Current {
        static @Nullable String traceParent() {
            SpanContext context = Span.current().getSpanContext();
            return context.isValid() && context.isSampled()
                    ? "00-" + context.getTraceId() + "-" + context.getSpanId() + "-" + context.getTraceFlags().asHex()
                    : null;
        }
    }
}
