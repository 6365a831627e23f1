package dev.idem.core.internal;

import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * Where the processor's spans go: nowhere ({@link #NONE}, when the application passed no
 * OpenTelemetry, at the cost of a call that does nothing) or an OpenTelemetry tracer
 * ({@link OpenTelemetryTracing}), so the OpenTelemetry API is needed only by applications that
 * trace. Thread-safe.
 */
public interface Tracing {

    /** Traces nothing. */
    Tracing NONE = new Tracing() {
    };

    /** A batch's claim round trip: a span of its own, never current, that the batch's messages link to. */
    default Step claim(int messages) {
        return Step.NONE;
    }

    /** The completion of a batch's finished keys, under the batch's claim span; ended when it lands. */
    default Step completion(Step claim, int keys) {
        return Step.NONE;
    }

    /**
     * One message's run, current on this thread (and in the MDC) until closed. Its parent is the
     * current span where the client is itself traced, else the producer's context read from the
     * message's headers; it links to the batch's claim, and to the run a replayed letter came from.
     */
    default Step message(Envelope envelope, IdempotencyKey key, Step claim) {
        return Step.NONE;
    }

    /** A step of the current message's run (business check, handler, dead letter, compensation), current until closed. */
    default Step step(String name) {
        return Step.NONE;
    }

    /** The span current on this thread. */
    default Step current() {
        return Step.NONE;
    }

    /** The current span's context as a W3C {@code traceparent}, or null when nothing is traced. */
    default @Nullable String traceParent() {
        return null;
    }

    /** One span; its setters do nothing when nothing is traced. Closed once, on the thread that opened it. */
    interface Step extends AutoCloseable {

        /** A span that records nothing. */
        Step NONE = new Step() {
        };

        default Step attribute(String name, long value) {
            return this;
        }

        default Step attribute(String name, String value) {
            return this;
        }

        default Step attribute(String name, boolean value) {
            return this;
        }

        /** A point in time on this span, e.g. the claim's answer. */
        default Step event(String name, String attribute, String value) {
            return this;
        }

        /** What happened to the message: its {@code idem.outcome}, and an error status where it failed. */
        default Step outcome(Outcome outcome) {
            return this;
        }

        /** The step failed with {@code failure}: recorded as an exception, with an error status. */
        default Step failed(Throwable failure) {
            return this;
        }

        /** Ends the span and, where it was current, restores what was current before. */
        @Override
        default void close() {
        }
    }
}
