package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class RunLogContextTest {

    @Test
    void aRunsEntriesAreItsKeyTopicAndAttemptAndAreGoneWhenItEnds() {
        RunLogContext.enter(new IdempotencyKey("inventory", "orders", "order-1"));
        RunLogContext.attempt(3);
        assertThat(MDC.get("idem.key")).isEqualTo("order-1");
        assertThat(MDC.get("idem.topic")).isEqualTo("orders");
        assertThat(MDC.get("idem.attempt")).isEqualTo("3");

        RunLogContext.attempt(40);
        assertThat(MDC.get("idem.attempt")).as("an attempt past the ones made once").isEqualTo("40");

        RunLogContext.leave();
        assertThat(MDC.get("idem.key")).isNull();
        assertThat(MDC.get("idem.topic")).isNull();
        assertThat(MDC.get("idem.attempt")).isNull();
    }
}
