package dev.idem.kafka;

import dev.idem.core.Batch;
import dev.idem.core.Disposition;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import dev.idem.kafka.internal.KafkaEnvelopes;
import dev.idem.kafka.internal.KafkaFailures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One poll's records on their way through one {@link Batch}: all keys claimed in one round trip
 * (ahead of the run, while the previous poll runs, or at its start), each partition processed in
 * offset order on the workers, stopping at the first record that must be redelivered. While it runs, the poll thread reads its progress (offsets of finished records),
 * stops partitions it loses, and waits for partitions to go idle (decision 0010). Thread-safe.
 *
 * @param <T> payload type
 */
final class PollJob<T> {

    private static final Logger LOG = LoggerFactory.getLogger(PollJob.class);
    // A poll whose batch could not even be opened holds no claim: try it again soon.
    private static final Duration OPEN_FAILED_RETRY = Duration.ofSeconds(1);

    private final IdempotentProcessor<T> processor;
    private final ConsumerRecords<byte[], byte[]> records;
    private final List<TopicPartition> partitions;
    private final Executor workers;
    private final BooleanSupplier stopAll;
    private final Consumer<Throwable> failures;
    private final Map<TopicPartition, OffsetAndMetadata> commits = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Redelivery> redeliveries = new ConcurrentHashMap<>();
    private final List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
    private final Set<TopicPartition> stopped = ConcurrentHashMap.newKeySet();
    private final Map<TopicPartition, CountDownLatch> idle = new HashMap<>();
    private final CompletableFuture<PollResult> result = new CompletableFuture<>();
    private final AtomicBoolean claimStarted = new AtomicBoolean();
    private final CompletableFuture<Batch<T>> opened = new CompletableFuture<>();
    // Where each partition's records start in the batch, set by the claim.
    private final Map<TopicPartition, Integer> from = new ConcurrentHashMap<>();

    /**
     * @param workers  where partitions run, one task each
     * @param stopAll  answers true once every partition must stop after its current record
     * @param failures told about every throwable that escaped the processor for one record
     */
    PollJob(IdempotentProcessor<T> processor, ConsumerRecords<byte[], byte[]> records, Executor workers,
            BooleanSupplier stopAll, Consumer<Throwable> failures) {
        this.processor = processor;
        this.records = records;
        this.partitions = List.copyOf(records.partitions());
        this.workers = workers;
        this.stopAll = stopAll;
        this.failures = failures;
        partitions.forEach(p -> idle.put(p, new CountDownLatch(1)));
    }

    /**
     * Claims the keys (on the calling thread), so that {@link #run()} finds them claimed; a poll loop
     * calls it ahead of the run, while the previous poll's records run. Once only.
     */
    void claim() {
        if (!claimStarted.compareAndSet(false, true)) {
            return;
        }
        try {
            List<Envelope> envelopes = new ArrayList<>(records.count());
            for (TopicPartition partition : partitions) {
                from.put(partition, envelopes.size());
                records.records(partition).forEach(r -> envelopes.add(KafkaEnvelopes.of(r)));
            }
            opened.complete(processor.open(envelopes));
        } catch (RuntimeException | Error e) {
            opened.completeExceptionally(e);
        }
    }

    /** Claims the keys, then processes every partition and closes the batch, on the calling thread. */
    void run() {
        claim();
        runClaimed();
    }

    /**
     * Processes every partition and closes the batch, on the calling thread, once the claim made
     * ahead on another thread ({@link #claim()}) answered; never claims itself, so a poll loop's
     * claims stay on one thread, in the order of the polls.
     */
    void runClaimed() {
        Batch<T> batch;
        try {
            batch = opened.join();
        } catch (CompletionException wrapped) {
            Throwable e = wrapped.getCause() != null ? wrapped.getCause() : wrapped;
            idle.values().forEach(CountDownLatch::countDown);
            if (KafkaFailures.isCrash(e)) {
                result.completeExceptionally(e);
                return;
            }
            LOG.error("could not claim the keys of {} record(s); redelivering them in {}", records.count(),
                    OPEN_FAILED_RETRY, e);
            failures.accept(e);
            partitions.forEach(p -> redeliveries.put(p,
                    new Redelivery(records.records(p).get(0).offset(), OPEN_FAILED_RETRY)));
            result.complete(new PollResult(commits, redeliveries, outcomes));
            return;
        }
        Throwable crash = null;
        try {
            List<CompletableFuture<Void>> tasks = new ArrayList<>(partitions.size());
            for (TopicPartition partition : partitions) {
                tasks.add(CompletableFuture.runAsync(() -> {
                    try {
                        processPartition(batch, partition, Objects.requireNonNull(from.get(partition), "first offset"));
                    } finally {
                        Objects.requireNonNull(idle.get(partition), "latch").countDown();
                    }
                }, workers));
            }
            CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
            crash = e.getCause() == null ? e : e.getCause();
        } catch (RuntimeException | Error e) {
            crash = e;
        }
        if (crash != null) {
            // Only a crash of the JVM gets here: per-record failures are caught in processPartition.
            batch.abandon();
            result.completeExceptionally(crash);
            return;
        }
        try {
            batch.close();
        } catch (RuntimeException e) {
            // A claim store's defect (it should log and go on): the records ran and their outcomes
            // stand; the poll loop must go on, not wait for this poll for ever.
            LOG.error("closing the batch of {} record(s) failed; its claims lapse with their leases",
                    records.count(), e);
        } catch (Error e) {
            result.completeExceptionally(e);
            throw e;
        }
        result.complete(new PollResult(commits, redeliveries, outcomes));
    }

    /**
     * Gives the job up without running any of it: once its claim has answered, every key it claimed
     * is released, on {@code closer} (the claim thread, never the caller's: a rebalance callback makes
     * no round trip), and the job ends with nothing to commit or redeliver. For a poll claimed
     * ahead that will not run (a rebalance, the close): its records are fetched again from where the
     * loop seeks.
     */
    void discard(Executor closer) {
        stop(partitions);
        idle.values().forEach(CountDownLatch::countDown);
        if (claimStarted.compareAndSet(false, true)) {
            // Not claimed yet: nothing to release.
            opened.complete(null);
        }
        Runnable close = () -> {
            try {
                Batch<T> batch = opened.isCompletedExceptionally() ? null : opened.getNow(null);
                if (batch != null) {
                    batch.close();
                }
            } catch (RuntimeException | Error e) {
                LOG.warn("could not release the claims of a poll given up; their leases will expire", e);
            } finally {
                result.complete(new PollResult(Map.of(), Map.of(), List.of()));
            }
        };
        // On the claim thread: a claim made meanwhile that meets these keys asks again when it runs.
        opened.whenCompleteAsync((batch, error) -> close.run(), closer);
    }

    /**
     * The offset of the first record of each partition of this poll not stopped yet: a partition
     * stopped because an earlier record was sent back is sought there already.
     */
    Map<TopicPartition, Long> firstOffsets() {
        Map<TopicPartition, Long> first = new HashMap<>();
        partitions.stream().filter(p -> !stopped.contains(p))
                .forEach(p -> first.put(p, records.records(p).get(0).offset()));
        return first;
    }

    private void processPartition(Batch<T> batch, TopicPartition partition, int from) {
        List<ConsumerRecord<byte[], byte[]>> partitionRecords = records.records(partition);
        for (int i = 0; i < partitionRecords.size(); i++) {
            if (stopAll.getAsBoolean() || stopped.contains(partition)) {
                return;
            }
            ConsumerRecord<byte[], byte[]> record = partitionRecords.get(i);
            Outcome outcome;
            Disposition disposition;
            try {
                outcome = batch.process(from + i);
                disposition = outcome.disposition();
            } catch (RuntimeException | Error e) {
                if (KafkaFailures.isCrash(e)) {
                    throw e;
                }
                // The core let it escape (a handler Error, a codec returning null, a Backoff returning a
                // bad delay): it is this record's failure, not the consumer's. Its claim is neither
                // completed nor released, so it comes back when its lease ends, as after a crash, and
                // the claim store counts it towards the dead letter (decision 0010).
                Duration retry = processor.lease();
                LOG.error("{} escaped Idem's processing of {}@{}; treating it as this record's failure and "
                        + "redelivering the partition from there in {}", e.getClass().getName(), partition,
                        record.offset(), retry, e);
                failures.accept(e);
                redeliveries.put(partition, new Redelivery(record.offset(), retry));
                return;
            }
            outcomes.add(outcome);
            if (!disposition.acknowledges()) {
                redeliveries.put(partition, new Redelivery(record.offset(), disposition.delay()));
                return;
            }
            commits.put(partition, new OffsetAndMetadata(record.offset() + 1));
        }
    }

    /** The partitions of this poll. */
    List<TopicPartition> partitions() {
        return partitions;
    }

    /** Offsets past the last finished record of each partition, so far. */
    Map<TopicPartition, OffsetAndMetadata> progress() {
        return Map.copyOf(commits);
    }

    /** Stops these partitions after their current record; their other records are released unprocessed. */
    void stop(Collection<TopicPartition> lost) {
        stopped.addAll(lost);
    }

    /** Waits up to {@code timeout} for these partitions' current records to finish; true if they did. */
    boolean awaitIdle(Collection<TopicPartition> wanted, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (TopicPartition partition : wanted) {
            CountDownLatch latch = idle.get(partition);
            if (latch != null && !latch.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        return true;
    }

    /** Partitions whose records are still running. */
    List<TopicPartition> running() {
        return partitions.stream().filter(p -> Objects.requireNonNull(idle.get(p), "latch").getCount() > 0).toList();
    }

    /** Waits up to {@code timeout} for the job to end; true if it has. */
    boolean await(Duration timeout) throws InterruptedException {
        try {
            result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // Failed or not done: isDone() tells which.
        }
        return result.isDone();
    }

    /** Whether the job has ended. */
    boolean isDone() {
        return result.isDone();
    }

    /** Completes once every job given (nulls skipped) has ended. */
    static CompletableFuture<Void> allDone(List<? extends PollJob<?>> jobs) {
        List<CompletableFuture<?>> ended = new ArrayList<>();
        for (PollJob<?> job : jobs) {
            if (job != null) {
                ended.add(job.result.handle((r, e) -> null));
            }
        }
        return CompletableFuture.allOf(ended.toArray(CompletableFuture[]::new));
    }

    /**
     * The result of an ended job.
     *
     * @throws Error the JVM error that crashed a handler: the batch was abandoned
     */
    PollResult result() {
        try {
            return result.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof Error crash) {
                throw crash;
            }
            throw e;
        }
    }
}
