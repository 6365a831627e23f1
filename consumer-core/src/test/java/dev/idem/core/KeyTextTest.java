package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.memory.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** One rule for every key source: two different keys never become one, and what is text stays readable. */
class KeyTextTest {

    private static final byte[][] BINARY_HEADERS = {{(byte) 0xFF}, {(byte) 0xFE}, {(byte) 0xC3, 0x28}};

    @Test
    void binaryHeaderValuesStayDistinctKeys() {
        List<String> keys = new ArrayList<>();
        for (byte[] value : BINARY_HEADERS) {
            Envelope envelope = new Envelope("orders", 0, "1", "orders-0@1", 0,
                    Map.of("event-id", KeyText.headerText(value)), new byte[0]);
            keys.add(KeySource.<Object>header("event-id").keyOf(envelope, null));
        }

        assertThat(new HashSet<>(keys)).hasSize(3);
        assertThat(keys.get(0)).isEqualTo("b64:_w");
        assertThat(Base64.getUrlDecoder().decode(keys.get(2).substring(4))).isEqualTo(BINARY_HEADERS[2]);
    }

    @Test
    void textThatStoresCannotKeepIsEncodedOnceAndReversibly() {
        assertThat(KeyText.of("order-42")).isEqualTo("order-42");
        assertThat(KeyText.of("José 🛒")).isEqualTo("José 🛒");
        assertThat(KeyText.of("\ud800")).isNotEqualTo(KeyText.of("\ud801")).startsWith("b64:");
        assertThat(KeyText.of("A\u0000B")).isEqualTo("b64:QQBC");
        // Text that looks like an encoding is encoded itself: it never meets the key it looks like.
        assertThat(KeyText.of("b64:QQBC")).isNotEqualTo("b64:QQBC").isNotEqualTo(KeyText.of("A\u0000B"));
        assertThat(KeyText.of("A\u0000B".getBytes(StandardCharsets.UTF_8))).isEqualTo(KeyText.of("A\u0000B"));
    }

    @Test
    void aHeaderThatIsTextReadsAsItselfAndOneThatLooksEncodedIsEncoded() {
        assertThat(KeyText.headerText("evt-1".getBytes(StandardCharsets.UTF_8))).isEqualTo("evt-1");
        assertThat(KeyText.headerText("b64:_w".getBytes(StandardCharsets.UTF_8))).isNotEqualTo("b64:_w");
        assertThat(KeyText.headerText((byte[]) null)).isEmpty();
        assertThat(KeyText.headerText("b64:_w")).isEqualTo(KeyText.headerText("b64:_w".getBytes(StandardCharsets.UTF_8)));
    }

    record Order(String id) {
    }

    @Test
    void jsonKeysWithLoneSurrogatesAreTwoEffectsThroughTheProcessor() {
        // Given JSON orders whose ids are lone surrogates (valid JSON escapes, not valid UTF-16 text),
        // and a key source written by hand (not one of KeySource's)
        InMemoryClaimStore store = new InMemoryClaimStore(new ManualClock(Instant.parse("2026-11-22T10:00:00Z")),
                Duration.ofDays(7), Duration.ofDays(1));
        List<String> applied = new CopyOnWriteArrayList<>();
        IdempotentProcessor<Order> processor = IdempotentProcessor.<Order>builder(d -> applied.add(d.key().value()))
                .group("inventory").claims(store).dedupCheck(DedupCheck.none()).deadLetters(new RecordingPublisher())
                .codec(PayloadCodec.json(Order.class)).keys((envelope, order) -> order.id()).build();

        // When both are processed
        for (String id : new String[] {"\\ud800", "\\ud801", "A\\u0000B"}) {
            processor.process(new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(),
                    ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)));
        }

        // Then each is its own effect, under a key any store keeps
        assertThat(applied).hasSize(3).doesNotHaveDuplicates().allSatisfy(key -> assertThat(key).startsWith("b64:"));
        processor.close();
    }
}
