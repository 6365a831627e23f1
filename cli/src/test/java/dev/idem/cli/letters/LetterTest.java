package dev.idem.cli.letters;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LetterTest {

    @Test
    void idemHeadersAreInTheOrderIdemWritesThemWhateverOrderTheBrokerGaveThem() {
        // Given the headers as RocketMQ's user properties (a hash map) hand them back, plus one Idem does not write
        Map<String, String> shuffled = new LinkedHashMap<>();
        shuffled.put("idem-consumer-group", "inventory");
        shuffled.put("idem-future-header", "x");
        shuffled.put("idem-last-failure-at", "2026-11-22T03:00:00Z");
        shuffled.put("idem-original-partition", "1");
        shuffled.put("idem-reason", "attempts exhausted");
        shuffled.put("idem-idempotency-key", "order-42");
        shuffled.put("idem-original-topic", "orders");

        Letter letter = new Letter("broker-a:1:0", null, new byte[0], List.of(), shuffled, null, null, null);

        assertThat(letter.idem().keySet()).containsExactly("idem-original-topic", "idem-original-partition",
                "idem-consumer-group", "idem-idempotency-key", "idem-reason", "idem-last-failure-at", "idem-future-header");
    }
}
