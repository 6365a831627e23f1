package dev.idem.kafka;

import dev.idem.core.Batch;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import dev.idem.kafka.internal.KafkaEnvelopes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Runs one poll's records through Idem, for poll loops you write yourself (the
 * {@link IdemKafkaConsumer} uses it too). All keys are claimed in one round trip; each partition is
 * processed in offset order, and stops at the first record that must be redelivered, so partition
 * order holds; the {@link PollResult} says what to commit and where to seek back.
 *
 * <pre>{@code
 * PollResult result = idem.process(consumer.poll(timeout));
 * consumer.commitSync(result.commits());
 * result.redeliveries().forEach((partition, r) -> {
 *     consumer.seek(partition, r.offset());
 *     consumer.pause(List.of(partition));   // resume after r.delay()
 * });
 * }</pre>
 *
 * <p>Thread-safe. Partitions run in parallel on the given executor, one task per partition.
 *
 * @param <T> payload type
 */
public final class KafkaRecordProcessor<T> {

    private final IdempotentProcessor<T> processor;
    private final Executor executor;

    private KafkaRecordProcessor(IdempotentProcessor<T> processor, Executor executor) {
        this.processor = Objects.requireNonNull(processor, "processor");
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /** Processes partitions one after another on the calling thread. */
    public static <T> KafkaRecordProcessor<T> of(IdempotentProcessor<T> processor) {
        return new KafkaRecordProcessor<>(processor, Runnable::run);
    }

    /** Processes partitions in parallel on {@code executor}, one task per partition. */
    public static <T> KafkaRecordProcessor<T> of(IdempotentProcessor<T> processor, Executor executor) {
        return new KafkaRecordProcessor<>(processor, executor);
    }

    /** Processes every record of the poll. */
    public PollResult process(ConsumerRecords<byte[], byte[]> records) {
        return process(records, () -> false);
    }

    /**
     * Processes the poll's records, stopping each partition early (after its current record) once
     * {@code stop} answers true; stopped records are released unprocessed and not committed.
     *
     * @throws Error whatever a handler threw that is not an {@link Exception}: the batch is then
     *               abandoned as a crashed process would leave it
     */
    public PollResult process(ConsumerRecords<byte[], byte[]> records, BooleanSupplier stop) {
        List<TopicPartition> partitions = new ArrayList<>(records.partitions());
        List<Envelope> envelopes = new ArrayList<>(records.count());
        List<int[]> ranges = new ArrayList<>(partitions.size());
        for (TopicPartition partition : partitions) {
            int from = envelopes.size();
            records.records(partition).forEach(r -> envelopes.add(KafkaEnvelopes.of(r)));
            ranges.add(new int[] {from, envelopes.size()});
        }
        Map<TopicPartition, OffsetAndMetadata> commits = new ConcurrentHashMap<>();
        Map<TopicPartition, Redelivery> redeliveries = new ConcurrentHashMap<>();
        List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>(envelopes.size()));
        Batch<T> batch = processor.open(envelopes);
        try {
            List<CompletableFuture<Void>> tasks = new ArrayList<>(partitions.size());
            for (int p = 0; p < partitions.size(); p++) {
                TopicPartition partition = partitions.get(p);
                List<ConsumerRecord<byte[], byte[]>> partitionRecords = records.records(partition);
                int from = ranges.get(p)[0];
                tasks.add(CompletableFuture.runAsync(() -> processPartition(batch, partition, partitionRecords, from,
                        stop, commits, redeliveries, outcomes), executor));
            }
            CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof Error crash) {
                batch.abandon();
                throw crash;
            }
            batch.close();
            throw e;
        } catch (Error crash) {
            batch.abandon();
            throw crash;
        }
        batch.close();
        return new PollResult(commits, redeliveries, outcomes);
    }

    private static <T> void processPartition(Batch<T> batch, TopicPartition partition,
                                             List<ConsumerRecord<byte[], byte[]>> records, int from,
                                             BooleanSupplier stop, Map<TopicPartition, OffsetAndMetadata> commits,
                                             Map<TopicPartition, Redelivery> redeliveries, List<Outcome> outcomes) {
        for (int i = 0; i < records.size(); i++) {
            ConsumerRecord<byte[], byte[]> record = records.get(i);
            Outcome outcome = batch.process(from + i);
            outcomes.add(outcome);
            if (!outcome.disposition().acknowledges()) {
                redeliveries.put(partition, new Redelivery(record.offset(), outcome.disposition().delay()));
                return;
            }
            commits.put(partition, new OffsetAndMetadata(record.offset() + 1));
            if (stop.getAsBoolean()) {
                return;
            }
        }
    }
}
