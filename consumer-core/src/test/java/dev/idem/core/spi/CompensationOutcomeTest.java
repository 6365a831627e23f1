package dev.idem.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CompensationOutcomeTest {

    @Test
    void everyOutcomeReadsBackFromItsRecordedText() {
        for (CompensationOutcome outcome : new CompensationOutcome[] {CompensationOutcome.PENDING,
                CompensationOutcome.OK, CompensationOutcome.failed("java.io.IOException: refund service down")}) {
            assertThat(CompensationOutcome.parse(outcome.text())).isEqualTo(outcome);
        }
        assertThat(CompensationOutcome.failed("x").text()).isEqualTo("failed: x");
    }

    @Test
    void textNoStoreWritesIsRefused() {
        assertThatThrownBy(() -> CompensationOutcome.parse("done")).hasMessageContaining("'done'");
        assertThatThrownBy(() -> new CompensationOutcome(CompensationOutcome.Status.OK, "why"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
