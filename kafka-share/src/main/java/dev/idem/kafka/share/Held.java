package dev.idem.kafka.share;

import java.time.Instant;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;

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
    record Verdict(AcknowledgeType type, Instant at) {
        boolean rerun() {
            return type == null;
        }
    }

    final Id id;
    // As the last poll returned it, and when: its lock was acquired or renewed then. Poll thread only.
    ConsumerRecord<byte[], byte[]> record;
    Instant returned;
    // When its lock was last renewed (RENEW sent), null if never. Poll thread only.
    Instant renewed;
    // Null while it runs; set by the worker that finished it, read by the poll thread.
    volatile Verdict verdict;
    // The broker's delivery count of the delivery being run: a later delivery is another Held.
    final int deliveries;

    Held(ConsumerRecord<byte[], byte[]> record) {
        this.id = Id.of(record);
        this.record = record;
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
