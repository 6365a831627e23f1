package dev.idem.kafka.share;

import java.time.Instant;
import java.util.Objects;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

/**
 * A record a share consumer holds: acquired from the broker and not yet acknowledged for good, with
 * the verdict its run left. Fields marked poll thread are read and written there only.
 */
final class Held {

    /** A record's place: topic, partition, offset. */
    record Id(String topic, int partition, long offset) {
        static Id of(ConsumerRecord<?, ?> record) {
            return new Id(record.topic(), record.partition(), record.offset());
        }
    }

    /**
     * What is to be done with a held record: acknowledge it with {@code type} once {@code at} has
     * come, or (type null) run it again then.
     */
    record Verdict(@Nullable AcknowledgeType type, Instant at) {
        boolean rerun() {
            return type == null;
        }

        /** The acknowledgement of a verdict that is not a re-run. */
        AcknowledgeType acknowledgement() {
            return Objects.requireNonNull(type, "a re-run is not acknowledged");
        }
    }

    final Id id;
    // As the last poll returned it, and when: its lock was acquired or renewed then. Poll thread only.
    ConsumerRecord<byte[], byte[]> record;
    Instant returned;
    // When its lock was last renewed (RENEW sent), null if never. Poll thread only.
    @Nullable Instant renewed;
    // Null while it runs; set by the worker that finished it, read by the poll thread.
    volatile @Nullable Verdict verdict;
    // The broker's delivery count of the delivery being run: a later delivery is another Held.
    final int deliveries;

    Held(ConsumerRecord<byte[], byte[]> record, Instant returned) {
        this.id = Id.of(record);
        this.record = record;
        this.returned = returned;
        this.deliveries = deliveries(record);
    }

    static int deliveries(ConsumerRecord<?, ?> record) {
        return record.deliveryCount().map(Short::intValue).orElse(1);
    }

    boolean running() {
        return verdict == null;
    }

    /** Whether this is the broker's last delivery of the record under {@code limit}. */
    boolean lastDelivery(int limit) {
        return deliveries >= limit;
    }
}
