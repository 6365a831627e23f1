package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeadLetterTest {

    private static DeadLetter withoutException(Map<String, String> originalHeaders) {
        Envelope envelope = new Envelope("orders", 0, "7", "orders-0@7", 1, originalHeaders,
                "{}".getBytes(StandardCharsets.UTF_8));
        Instant now = Instant.parse("2026-11-22T10:00:00Z");
        return new DeadLetter(new IdempotencyKey("inventory", "orders", "order-1"), envelope, 0,
                "no idempotency key", "", "", "", now, now);
    }

    @Test
    void headersWithNoValueAreLeftOutNotSentBlank() {
        // Given a dead letter with no exception (a message without a key) and a blank original header
        DeadLetter deadLetter = withoutException(Map.of("trace", "abc", "empty", " "));

        // When its headers are built
        Map<String, String> headers = deadLetter.headers();

        // Then no header is blank, and the ones with values are all there
        assertThat(headers.values()).allSatisfy(value -> assertThat(value).isNotBlank());
        assertThat(headers).doesNotContainKeys("idem-exception-class", "idem-exception-message",
                "idem-exception-stacktrace", "empty");
        assertThat(headers).containsEntry("trace", "abc").containsEntry("idem-reason", "no idempotency key")
                .containsEntry("idem-idempotency-key", "order-1").containsEntry("idem-attempts", "0");
    }

    @Test
    void aMessageDeadLetteredAgainCarriesOneSetOfIdemHeaders() {
        // Given a message that already carries idem- headers from an earlier dead letter
        DeadLetter deadLetter = withoutException(Map.of("idem-reason", "old reason", "idem-exception-class", "Old"));

        // When it is dead-lettered again
        Map<String, String> headers = deadLetter.headers();

        // Then only the newest idem- headers remain
        assertThat(headers).containsEntry("idem-reason", "no idempotency key").doesNotContainKey("idem-exception-class");
        assertThat(deadLetter.idemHeaders().keySet()).allSatisfy(name -> assertThat(name).startsWith("idem-"));
    }
}
