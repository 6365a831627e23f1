package dev.idem.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Envelope;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class KafkaEnvelopesTest {

    @Test
    void aRecordsHeadersAreTextTheLastOfARepeatedOneWinningAndNoHeadersAreNone() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("order", "o-1".getBytes(StandardCharsets.UTF_8));
        headers.add("order", "o-2".getBytes(StandardCharsets.UTF_8));
        headers.add("raw", new byte[] {(byte) 0xff, 0x00});

        Envelope with = KafkaEnvelopes.of(record(headers));
        Envelope without = KafkaEnvelopes.of(record(new RecordHeaders()));

        assertThat(with.headers()).isEqualTo(Map.of("order", "o-2", "raw", "b64:_wA"));
        assertThat(with.messageId()).isEqualTo("orders-3@42");
        assertThat(without.headers()).isEmpty();
        assertThat(without.position()).isEqualTo("42");
    }

    private static ConsumerRecord<byte[], byte[]> record(RecordHeaders headers) {
        return new ConsumerRecord<>("orders", 3, 42, 1_700_000_000_000L, TimestampType.CREATE_TIME, 0, 4,
                "k".getBytes(StandardCharsets.UTF_8), "body".getBytes(StandardCharsets.UTF_8), headers, Optional.empty());
    }
}
