package dev.idem.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Fills a Kafka topic with the throughput runs' orders, all of them or a failure: a record lost
 * on the way would leave a variant waiting for it until its time limit, and its rate wrong.
 */
final class OrderTopics {

    private OrderTopics() {
    }

    /** Sends {@code messages} orders keyed {@code order-<n>:deduct}, once every partition has a leader. */
    static void fill(String bootstrapServers, String topic, int messages) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.LINGER_MS_CONFIG, 10, ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            int partitions = awaitLeaders(producer, topic);
            // The first order of each partition is sent alone and acknowledged: a leader the metadata
            // names may not take writes yet (NOT_LEADER_OR_FOLLOWER), and batches already in flight
            // behind a refused first one were seen retrying out of order until they expired.
            int probes = Math.min(partitions, messages);
            for (int i = 0; i < probes; i++) {
                try {
                    producer.send(new ProducerRecord<>(topic, i, key(i), Payloads.order(i)))
                            .get(2, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted filling " + topic, e);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException("partition " + i + " of " + topic + " takes no writes", e);
                }
            }
            AtomicInteger failed = new AtomicInteger();
            AtomicReference<Exception> first = new AtomicReference<>();
            for (int i = probes; i < messages; i++) {
                producer.send(new ProducerRecord<>(topic, key(i), Payloads.order(i)),
                        (metadata, error) -> {
                            if (error != null) {
                                failed.incrementAndGet();
                                first.compareAndSet(null, error);
                            }
                        });
            }
            producer.flush();
            if (failed.get() > 0) {
                throw new IllegalStateException(failed.get() + " of " + messages + " records could not be sent to "
                        + topic + "; the run's figures would be wrong", first.get());
            }
        }
    }

    private static byte[] key(int order) {
        return String.format("order-%08d:deduct", order).getBytes(StandardCharsets.UTF_8);
    }

    // A topic just created may not have its leaders yet: records sent meanwhile are retried out of
    // order, and some expire. Returns the topic's partition count.
    private static int awaitLeaders(KafkaProducer<byte[], byte[]> producer, String topic) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<PartitionInfo> partitions = producer.partitionsFor(topic);
            if (!partitions.isEmpty() && partitions.stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                return partitions.size();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the partitions of " + topic + " have no leader after 30 s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + topic, e);
            }
        }
    }
}
