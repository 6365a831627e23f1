package dev.idem.kafka;

import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.internal.ConsumerLifecycle;
import dev.idem.kafka.internal.LoopEvents;
import dev.idem.kafka.internal.KafkaClients;
import dev.idem.kafka.internal.KafkaFailures;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poll thread of an {@link IdemKafkaConsumer} (decision 0010). Records run on other threads
 * while this one pauses the assigned partitions and keeps polling, so the consumer stays in its
 * group however long a batch takes; it commits offsets as records finish, hands revoked partitions
 * over after their current record, and shuts down in order. Confined to its own thread, except
 * {@link #stop()}.
 *
 * @param <T> payload type
 */
final class PollLoop<T> implements ConsumerLifecycle.Loop {

    private static final Logger LOG = LoggerFactory.getLogger(PollLoop.class);
    // Poll at least this often: paused partitions resume close to their deadline, and a finished
    // batch is picked up quickly while the poll thread waits for it.
    private static final Duration MAX_POLL_WAIT = Duration.ofMillis(100);
    // Commit finished records of a running batch this often: a rebalance or crash then redelivers
    // about a second of work, and a fast batch (the usual case) commits once, when it ends.
    private static final Duration PROGRESS_COMMIT_INTERVAL = Duration.ofSeconds(1);

    /** Fixed settings of the loop. */
    record Settings(List<String> topics, String bootstrapServers, Duration closeTimeout, Duration joinTimeout,
                    Duration revokeWait, Clock clock) {
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final IdempotentProcessor<T> processor;
    private final Executor batches;
    private final Executor workers;
    private final Settings settings;
    private final LoopEvents events;
    private final Runnable release;
    private final Map<TopicPartition, Instant> pausedUntil = new HashMap<>();
    // Partitions revoked or lost while the job ran: their results are no longer ours to commit.
    private final Set<TopicPartition> revokedDuringJob = new HashSet<>();
    private final Map<TopicPartition, OffsetAndMetadata> committedInJob = new HashMap<>();
    private volatile boolean stopping;
    private boolean closingConsumer;
    // A JVM error stopped the loop: it commits nothing more, as a crashed process would not.
    private boolean crashed;
    private PollJob<T> job;
    // The latest offsets handed to commitAsync, per partition: committed again, synchronously, when a
    // partition is revoked and at the close, so a lost asynchronous commit does not outlive either.
    private final Map<TopicPartition, OffsetAndMetadata> committedAsync = new HashMap<>();
    // A commitAsync the consumer cannot go on after (e.g. not authorized): thrown on the poll thread.
    private RuntimeException asyncCommitFailure;
    private Instant lastProgressCommit;
    private Instant started;
    private boolean joined;
    private boolean joinReported;

    /**
     * @param batches where each poll's batch is claimed and driven (one thread)
     * @param workers where partitions run
     * @param release closes the processor and publishers; run once, when no batch is running any more
     */
    PollLoop(KafkaConsumer<byte[], byte[]> consumer, IdempotentProcessor<T> processor, Executor batches,
             Executor workers, Settings settings, LoopEvents events, Runnable release) {
        this.consumer = consumer;
        this.processor = processor;
        this.batches = batches;
        this.workers = workers;
        this.settings = settings;
        this.events = events;
        this.release = release;
    }

    /** Stop taking work: partitions stop after their current record. Any thread. */
    @Override
    public void stop() {
        stopping = true;
    }

    @Override
    public void run() {
        try {
            started = settings.clock().instant();
            consumer.subscribe(settings.topics(), new Rebalance());
            while (!stopping) {
                if (asyncCommitFailure != null) {
                    throw asyncCommitFailure;
                }
                if (job == null) {
                    resumeDue();
                    checkJoined();
                    ConsumerRecords<byte[], byte[]> polled = consumer.poll(MAX_POLL_WAIT);
                    if (!polled.isEmpty()) {
                        startJob(polled);
                    }
                } else if (job.await(MAX_POLL_WAIT)) {
                    finishJob();
                } else {
                    keepMembership();
                }
            }
            drain();
        } catch (Throwable e) {
            // A JVM error is a crash: nothing more is committed or released, claims expire.
            crashed = e instanceof Error;
            stopping = true;
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.error("Kafka consumer for {} stopped by {}; records not committed will be redelivered to the group",
                    settings.topics(), e.getClass().getName(), e);
            events.failed(e, true);
            if (!crashed) {
                drainQuietly();
            }
        } finally {
            // Leaving the group revokes the partitions; the drain already waited for their records.
            closingConsumer = true;
            try {
                KafkaClients.close(consumer, crashed ? Duration.ZERO : settings.closeTimeout());
            } catch (RuntimeException e) {
                LOG.warn("closing the Kafka consumer for {} failed", settings.topics(), e);
            }
            PollJob<T> last = job;
            if (last == null) {
                release.run();
            } else {
                last.whenDone(release);
            }
            events.ended();
        }
    }

    private void startJob(ConsumerRecords<byte[], byte[]> polled) {
        // Nothing more is fetched while the batch runs; poll() now only keeps the membership.
        consumer.pause(consumer.assignment());
        committedInJob.clear();
        revokedDuringJob.clear();
        lastProgressCommit = settings.clock().instant();
        job = new PollJob<>(processor, polled, workers, () -> stopping, failure -> events.failed(failure, false));
        batches.execute(job::run);
    }

    private void keepMembership() {
        if (Duration.between(lastProgressCommit, settings.clock().instant()).compareTo(PROGRESS_COMMIT_INTERVAL) >= 0) {
            lastProgressCommit = settings.clock().instant();
            commitAsync(ours(job.progress()));
        }
        ConsumerRecords<byte[], byte[]> early = consumer.poll(Duration.ZERO);
        // Records of a partition assigned before the listener could pause it: take them back for later.
        for (TopicPartition partition : early.partitions()) {
            consumer.seek(partition, early.records(partition).get(0).offset());
            consumer.pause(List.of(partition));
        }
    }

    private void finishJob() {
        PollJob<T> done = job;
        job = null;
        PollResult result = done.result();
        commitAsync(ours(result.commits()));
        Instant now = settings.clock().instant();
        Set<TopicPartition> assigned = consumer.assignment();
        result.redeliveries().forEach((partition, redelivery) -> {
            if (assigned.contains(partition) && !revokedDuringJob.contains(partition)) {
                consumer.seek(partition, redelivery.offset());
                pausedUntil.put(partition, now.plus(redelivery.delay()));
            }
        });
        List<TopicPartition> resume = new ArrayList<>(assigned);
        resume.removeAll(pausedUntil.keySet());
        consumer.resume(resume);
        revokedDuringJob.clear();
        committedInJob.clear();
    }

    /** Stop, finish or give up after the close timeout, commit what finished. */
    private void drain() throws InterruptedException {
        if (job == null) {
            confirmAsyncCommits(null);
            return;
        }
        long deadline = System.nanoTime() + settings.closeTimeout().toNanos();
        while (!job.isDone() && System.nanoTime() < deadline) {
            if (!job.await(MAX_POLL_WAIT)) {
                keepMembership();
            }
        }
        if (job.isDone()) {
            finishJob();
            confirmAsyncCommits(null);
            return;
        }
        confirmAsyncCommits(null);
        commit(ours(job.progress()));
        LOG.warn("closing with records still running after {} on {}: finished records are committed; the rest "
                + "are redelivered to the group, which finds them busy until they end; lease renewal and the "
                + "dead-letter producer are closed when they end", settings.closeTimeout(), job.running());
    }

    private void drainQuietly() {
        try {
            drain();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.warn("could not commit finished records while stopping; they will be redelivered", e);
        }
    }

    /** Offsets of partitions still ours, and beyond what this batch already committed. */
    private Map<TopicPartition, OffsetAndMetadata> ours(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> result = new HashMap<>();
        offsets.forEach((partition, offset) -> {
            OffsetAndMetadata before = committedInJob.get(partition);
            if (assigned.contains(partition) && !revokedDuringJob.contains(partition)
                    && (before == null || before.offset() < offset.offset())) {
                result.put(partition, offset);
            }
        });
        return result;
    }

    private void commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(offsets);
            committedInJob.putAll(offsets);
        } catch (RuntimeException e) {
            if (!KafkaFailures.isRecoverableCommitFailure(e)) {
                throw e;
            }
            LOG.warn("commit of {} failed ({}); those records will be delivered again and found done", offsets,
                    e.toString());
            events.failed(e, false);
        }
    }

    /**
     * Commits without waiting for the answer, so the next poll's records are fetched and claimed
     * meanwhile. A lost commit costs nothing but redelivery (the records are found done); commits
     * that must have landed (a revoked partition, the close) go through {@link #commit}, after
     * these in order.
     */
    private void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        consumer.commitAsync(offsets, (committed, failure) -> {
            if (failure == null) {
                return;
            }
            if (failure instanceof RuntimeException e && !KafkaFailures.isRecoverableCommitFailure(e)) {
                asyncCommitFailure = e;
                return;
            }
            LOG.warn("commit of {} failed ({}); those records will be delivered again and found done", offsets,
                    failure.toString());
            events.failed(failure, false);
        });
        committedInJob.putAll(offsets);
        committedAsync.putAll(offsets);
    }

    /** Commits again, and waits for, what went asynchronously for these partitions (null: all). */
    private void confirmAsyncCommits(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> confirm = new HashMap<>(committedAsync);
        if (partitions == null) {
            committedAsync.clear();
        } else {
            confirm.keySet().retainAll(partitions);
            committedAsync.keySet().removeAll(partitions);
        }
        confirm.keySet().retainAll(consumer.assignment());
        commit(confirm);
    }

    private void resumeDue() {
        if (pausedUntil.isEmpty()) {
            return;
        }
        Instant now = settings.clock().instant();
        List<TopicPartition> due = new ArrayList<>();
        pausedUntil.entrySet().removeIf(entry -> {
            if (entry.getValue().isAfter(now)) {
                return false;
            }
            due.add(entry.getKey());
            return true;
        });
        due.retainAll(consumer.assignment());
        if (!due.isEmpty()) {
            consumer.resume(due);
        }
    }

    private void checkJoined() {
        if (joined || joinReported
                || Duration.between(started, settings.clock().instant()).compareTo(settings.joinTimeout()) <= 0) {
            return;
        }
        joinReported = true;
        TimeoutException failure = new TimeoutException("no group membership after " + settings.joinTimeout()
                + " for topics " + settings.topics() + ": is bootstrap.servers=" + settings.bootstrapServers()
                + " reachable? Still trying");
        LOG.error(failure.getMessage());
        events.failed(failure, false);
    }

    /** Hands revoked partitions over after their current record, with what finished committed. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            partitions.forEach(pausedUntil::remove);
            if (!partitions.isEmpty() && !crashed) {
                confirmAsyncCommits(partitions);
            }
            if (job == null || partitions.isEmpty()) {
                return;
            }
            job.stop(partitions);
            boolean idle = false;
            try {
                // Bounded: the whole group waits for this member while it is in the callback.
                idle = job.awaitIdle(partitions, closingConsumer ? Duration.ZERO : settings.revokeWait());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Map<TopicPartition, OffsetAndMetadata> finished = ours(job.progress());
            finished.keySet().retainAll(partitions);
            commit(finished);
            revokedDuringJob.addAll(partitions);
            if (!idle && !closingConsumer) {
                LOG.info("partitions {} revoked while records still ran on them; the next owner finds those keys "
                        + "busy until they end", partitions);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            partitions.forEach(pausedUntil::remove);
            committedAsync.keySet().removeAll(partitions);
            if (job != null) {
                job.stop(partitions);
                revokedDuringJob.addAll(partitions);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            LOG.info("assigned {}", partitions);
            if (!joined) {
                joined = true;
                events.joined();
            }
            if (job != null) {
                consumer.pause(partitions);
            }
        }
    }
}
