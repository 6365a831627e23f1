package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeySourceTest {

    private static Envelope withKey(byte[] key) {
        return new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(), new byte[0], key);
    }

    @Test
    void differentBinaryKeysNeverBecomeOneKey() {
        // Given 1,000 Long keys serialized as 8 bytes (most are not valid UTF-8)
        Set<String> keys = new HashSet<>();
        for (long id = 0; id < 1_000; id++) {
            keys.add(KeySource.<Object>messageKey().keyOf(withKey(ByteBuffer.allocate(8).putLong(id * 257).array()), null));
        }

        // Then each is its own key
        assertThat(keys).hasSize(1_000).allSatisfy(key -> assertThat(key).startsWith("b64:"));
    }

    @Test
    void aTextKeyIsUsedAsItIs() {
        assertThat(KeySource.<Object>messageKey().keyOf(withKey("order-42".getBytes(StandardCharsets.UTF_8)), null))
                .isEqualTo("order-42");
        assertThat(KeySource.<Object>messageKey().keyOf(withKey("José".getBytes(StandardCharsets.UTF_8)), null))
                .isEqualTo("José");
        assertThat(KeySource.<Object>messageKey().keyOf(withKey(null), null)).isNull();
    }

    record Paid(String orderId, Instant paidAt) {
    }

    @Test
    void theJsonCodecReadsJavaTimeOutOfTheBox() throws Exception {
        Paid paid = PayloadCodec.json(Paid.class)
                .decode("{\"orderId\":\"o-1\",\"paidAt\":\"2026-11-22T10:00:00Z\",\"extra\":1}".getBytes(StandardCharsets.UTF_8));

        assertThat(paid).isEqualTo(new Paid("o-1", Instant.parse("2026-11-22T10:00:00Z")));
    }
}
