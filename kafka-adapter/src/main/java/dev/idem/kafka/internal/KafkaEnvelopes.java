package dev.idem.kafka.internal;

import dev.idem.core.Envelope;
import dev.idem.core.KeyText;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Turns Kafka records into envelopes. */
public final class KafkaEnvelopes {

    private static final byte[] EMPTY = new byte[0];

    private KafkaEnvelopes() {
    }

    /**
     * The envelope of a record: its offset is the position, {@code topic-partition@offset} the
     * message id (stable across redeliveries), headers as text by {@link KeyText#headerText(byte[])}
     * (UTF-8 text as it is, other bytes as {@code b64:} and their Base64; the last value of a
     * repeated header wins), a null value (tombstone) as an empty body; the record itself travels as the source.
     */
    public static Envelope of(ConsumerRecord<byte[], byte[]> record) {
        return of(record, 0);
    }

    /**
     * The envelope of a record, with the broker's own delivery count (a share group's
     * {@code deliveryCount}; 0 where unknown).
     */
    public static Envelope of(ConsumerRecord<byte[], byte[]> record, int brokerAttempt) {
        return new Envelope(record.topic(), record.partition(), Long.toString(record.offset()),
                record.topic() + "-" + record.partition() + "@" + record.offset(), brokerAttempt, headers(record),
                record.value() == null ? EMPTY : record.value(), record.key(),
                record.timestamp() < 0 ? null : Instant.ofEpochMilli(record.timestamp()), record);
    }

    // A record without headers (the usual case) gets the shared empty map: a map built and then copied
    // by the envelope per record showed in allocation profiles.
    private static Map<String, String> headers(ConsumerRecord<byte[], byte[]> record) {
        Map<String, String> headers = null;
        for (Header header : record.headers()) {
            if (headers == null) {
                headers = new HashMap<>();
            }
            headers.put(header.key(), KeyText.headerText(header.value()));
        }
        return headers == null ? Map.of() : headers;
    }
}
