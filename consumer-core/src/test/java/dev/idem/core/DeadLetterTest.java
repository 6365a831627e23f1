package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class DeadLetterTest {

    private static DeadLetter withoutException(Map<String, String> originalHeaders) {
        Envelope envelope = new Envelope("orders", 0, "7", "orders-0@7", 1, originalHeaders,
                "{}".getBytes(StandardCharsets.UTF_8));
        Instant now = Instant.parse("2026-11-22T10:00:00Z");
        return new DeadLetter(new IdempotencyKey("inventory", "orders", "order-1"), 1L, envelope, 0,
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

    @Test
    void theReadmeTableOfDeadLetterHeadersNamesEveryIdemHeaderAndNoOther() throws IOException {
        // Given a dead letter with every field set
        Envelope envelope = new Envelope("orders", 0, "7", "orders-0@7", 1, Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
        Instant now = Instant.parse("2026-11-22T10:00:00Z");
        DeadLetter full = new DeadLetter(new IdempotencyKey("inventory", "orders", "order-1"), 1L, envelope, 5,
                "attempts exhausted", "java.lang.IllegalStateException", "boom", "\tat com.shop.Stock.reserve(Stock.java:42)",
                now, now, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");

        // When the guide's table of dead-letter headers (docs/guide/failures.md) is read
        String readme = Files.readString(Path.of(System.getProperty("basedir", "."), "..", "docs", "guide", "failures.md"));
        String section = readme.substring(readme.indexOf("## Dead-letter messages"));
        Set<String> documented = section.substring(0, section.indexOf("\n## ")).lines()
                .filter(line -> line.startsWith("| `idem-"))
                .flatMap(line -> Pattern.compile("`(idem-[a-z-]+)`").matcher(line.split("\\|")[1]).results())
                .map(match -> match.group(1))
                .collect(Collectors.toSet());

        // Then it names exactly the headers Idem writes
        assertThat(documented).containsExactlyInAnyOrderElementsOf(full.idemHeaders().keySet());
    }
}
