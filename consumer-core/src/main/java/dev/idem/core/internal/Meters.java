package dev.idem.core.internal;

import dev.idem.core.Outcome;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * What the processor measures. {@link #NONE} when the application passed no meter registry, so
 * Micrometer is needed only by applications that use it ({@link MicrometerMeters}). Thread-safe.
 */
public interface Meters {

    /** Measures nothing. */
    Meters NONE = new Meters() {
    };

    /** Counts an outcome of {@code topic}. */
    default void outcome(String topic, Outcome outcome) {
    }

    /** Times a claim round trip. */
    default <R> R claim(Callable<R> call) throws Exception {
        return call.call();
    }

    /** Times a handler call. */
    default void handler(Callable<Void> call) throws Exception {
        call.call();
    }

    /** The claim store could not be reached. */
    default void storeUnavailable() {
    }

    /** A dead letter could not be published. */
    default void publishFailed() {
    }

    /** Claims taken over by another owner while held. */
    default void leaseLost(int count) {
    }

    /** A compensation failed every time it was tried. */
    default void compensationFailed() {
    }

    /** Watches how long the key deferred the longest in a row has been (zero when none is). */
    default void oldestDeferral(Supplier<Duration> age) {
    }
}
