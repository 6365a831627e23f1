package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.internal.Failures;
import org.junit.jupiter.api.Test;

/** Failure groups: the failure's class and the first application frame, lines left out. */
class FailureGroupTest {

    @Test
    void theSiteIsTheFirstFrameOutsideTheJdkTheClientsTheFrameworksAndIdem() {
        String trace = """
                java.lang.NumberFormatException: For input string: "12,50"
                \tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)
                \tat java.base/java.lang.Integer.parseInt(Integer.java:662)
                \tat com.shop.Prices.parse(Prices.java:31)
                \tat dev.idem.core.Protocol.settle(Protocol.java:290)
                Caused by: java.lang.IllegalStateException: inner
                \tat com.shop.Inner.run(Inner.java:1)
                """;
        assertThat(FailureGroup.site(trace)).isEqualTo("com.shop.Prices.parse(Prices.java:31)");
        assertThat(FailureGroup.site("x\n\tat app//com.shop.Loaded.run(Loaded.java:3)\n")).isEqualTo("com.shop.Loaded.run(Loaded.java:3)");
        assertThat(FailureGroup.site("\tat org.springframework.kafka.Listener.on(Listener.java:9)\n")).isEmpty();
        assertThat(FailureGroup.site(null)).isEmpty();
        assertThat(FailureGroup.site("com.fasterxml.jackson.core.JsonParseException: Unexpected character\n"
                + " at [Source: REDACTED; line: 1, column: 2]\n\tat com.shop.Codec.read(Codec.java:5)\n"))
                .as("a message's own ' at [Source' line is not a frame").isEqualTo("com.shop.Codec.read(Codec.java:5)");
        assertThat(FailureGroup.site("e\n\tat com.shop.Stock$$Lambda/0x000071b2c8001234.apply(Unknown Source)\n"))
                .isEqualTo("com.shop.Stock$$Lambda.apply(Unknown Source)");
    }

    @Test
    void oneClassAtTwoSitesIsTwoGroupsAndAMovedLineOrAnotherMessageIsTheSameGroup() {
        FailureGroup stock = FailureGroup.of("java.lang.IllegalStateException",
                "e: no stock for sku-1\n\tat com.shop.Stock.reserve(Stock.java:10)\n", "attempts exhausted");
        FailureGroup moved = FailureGroup.of("java.lang.IllegalStateException",
                "e: no stock for sku-2\n\tat com.shop.Stock.reserve(Stock.java:14)\n", "non-retryable failure");
        FailureGroup payment = FailureGroup.of("java.lang.IllegalStateException",
                "e\n\tat com.shop.Payments.capture(Payments.java:10)\n", "attempts exhausted");
        assertThat(moved.fingerprint()).isEqualTo(stock.fingerprint()).hasSize(8);
        assertThat(payment.fingerprint()).isNotEqualTo(stock.fingerprint());
        assertThat(FailureGroup.of("", "", "undecodable payload").fingerprint())
                .isNotEqualTo(FailureGroup.of("", "", "attempts exhausted").fingerprint());
    }

    @Test
    void aDeadLetterCarriesItsGroupAndSiteInItsHeaders() {
        // Idem's own packages are not the application's, so the trace is an application's, as text.
        String trace = Failures.stackTrace(new IllegalArgumentException("bad"))
                .replaceFirst("\tat ", "\tat com.shop.Stock.reserve(Stock.java:10)\n\tat ");
        DeadLetter letter = new DeadLetter(new IdempotencyKey("g", "t", "k"), 1, new Envelope("t", 0, "0", "t-0@0", 1,
                java.util.Map.of(), new byte[0]), 5, "attempts exhausted", IllegalArgumentException.class.getName(), "m",
                trace, java.time.Instant.EPOCH, java.time.Instant.EPOCH);
        assertThat(letter.idemHeaders())
                .containsEntry(DeadLetterHeaders.FAILURE_GROUP, letter.failureGroup().fingerprint())
                .hasEntrySatisfying(DeadLetterHeaders.FAILURE_SITE,
                        site -> assertThat(site).isEqualTo("com.shop.Stock.reserve(Stock.java:10)"));
    }
}
