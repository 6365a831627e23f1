package dev.idem.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.NonRetryableException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Classifying and describing failures ends, whatever the cause chain looks like. Each test runs on
 * a thread of its own with a timeout: before, a cause cycle made every one of these walks spin forever.
 */
@Timeout(value = 5, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FailuresTest {

    /** A → B → A: each one's cause set to the other (initCause refuses a direct self-cycle, not this). */
    private static RuntimeException cycle() {
        RuntimeException a = new RuntimeException("A");
        IllegalStateException b = new IllegalStateException("B", a);
        a.initCause(b);
        return a;
    }

    @Test
    void aCauseCycleIsClassifiedAndDescribedInBoundedTime() {
        RuntimeException failure = cycle();
        Failures failures = new Failures(List.of(), List.of());

        assertThat(failures.isInfrastructure(failure)).isFalse();
        assertThat(failures.isFatal(failure)).isFalse();
        assertThat(Failures.refusal(failure)).isNull();
        assertThat(Failures.stackTrace(failure)).contains("Caused by: java.lang.IllegalStateException: B");
    }

    @Test
    void theCausesOfACycleAreEachListedOnce() {
        RuntimeException failure = cycle();

        assertThat(Failures.causes(failure)).extracting(Throwable::getMessage).containsExactly("A", "B");
        assertThat(Failures.root(failure).getMessage()).isEqualTo("B");
    }

    @Test
    void aFatalCauseIsFoundAndACycleWithoutOneIsNotFatal() {
        Failures failures = new Failures(List.of(), List.of());

        assertThat(failures.isFatal(new RuntimeException("outer", new NonRetryableException("bad payload")))).isTrue();
        assertThat(failures.isFatal(new RuntimeException("outer", cycle()))).isFalse();
    }
}
