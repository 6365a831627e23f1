package dev.idem.cli.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressTest {

    private final StringWriter screen = new StringWriter();
    private final AtomicLong nanos = new AtomicLong(-5_000_000_000L);   // nanoTime's origin is arbitrary

    private Progress bar(int total, boolean terminal) {
        return new Progress(new PrintWriter(screen, true), total, terminal, nanos::get);
    }

    @Test
    void theBarFillsInThirtyStepsAndCountsWhatWasNotSent() {
        Progress progress = bar(4, true);

        progress.step(true);
        nanos.addAndGet(200_000_000L);
        progress.step(false);

        assertThat(screen.toString()).isEqualTo("\r[#######.......................] 1/4"
                + "\r[###############...............] 2/4  1 not sent");
    }

    @Test
    void stepsWithinATenthOfASecondAreNotRedrawnButTheLastOneIs() {
        Progress progress = bar(3, true);

        progress.step(true);
        nanos.addAndGet(50_000_000L);
        progress.step(true);
        nanos.addAndGet(10_000_000L);
        progress.step(true);
        progress.finish();

        assertThat(screen.toString()).isEqualTo("\r[##########....................] 1/3"
                + "\r[##############################] 3/3" + System.lineSeparator());
    }

    @Test
    void nothingIsDrawnWhenTheOutputIsNotATerminal() {
        Progress progress = bar(2, false);

        progress.step(true);
        progress.step(false);
        progress.finish();

        assertThat(screen.toString()).isEmpty();
    }

    @Test
    void anEmptyReplayDrawsNoBarAndNoBlankLine() {
        Progress progress = bar(0, true);

        progress.finish();

        assertThat(screen.toString()).isEmpty();
    }
}
