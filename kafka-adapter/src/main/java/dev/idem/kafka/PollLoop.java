package dev.idem.kafka;

import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.internal.ConsumerLifecycle;
import dev.idem.kafka.internal.KafkaClients;
import dev.idem.kafka.internal.LoopEvents;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poll thread of an {@link IdemKafkaConsumer} (decisions 0010, 0047). Records run on other
 * threads while this one keeps polling, so the consumer stays in its group however long a batch
 * takes; the next poll's keys are claimed while the current one runs (one poll ahead, then the
 * partitions are paused until it runs), so the claim's round trip is not waited for. It commits
 * offsets as records finish, hands revoked partitions over after their current record, and shuts
 * down in order. Confined to its own thread, except {@link #stop()}.
 *
 * @param <T> payload type
 */
final class PollLoop<T> implements ConsumerLifecycle.Loop {

    private static final Logger LOG = LoggerFactory.getLogger(PollLoop.class);
    // Poll at least this often: paused partitions resume close to their deadline, and a finished
    // batch is picked up quickly while the poll thread waits for it.
    private static final Duration MAX_POLL_WAIT = Duration.ofMillis(100);
    // While a poll runs and none is claimed ahead: new records end the wait at once; without any,
    // the running poll's end is noticed this late at most.
    private static final Duration AHEAD_POLL_WAIT = Duration.ofMillis(5);
    // Commit finished records of a running batch this often: a rebalance or crash then redelivers
    // about a second of work, and a fast batch (the usual case) commits once, when it ends.
    private static final Duration PROGRESS_COMMIT_INTERVAL = Duration.ofSeconds(1);

    /** Fixed settings of the loop. */
    record Settings(List<String> topics, String bootstrapServers, Duration closeTimeout, Duration joinTimeout,
                    Duration revokeWait, Clock clock) {
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final IdempotentProcessor<T> processor;
    private final Executor claims;
    private final Executor batches;
    private final Executor workers;
    private final Settings settings;
    private final LoopEvents events;
    private final Runnable release;
    private final OffsetCommits commits;
    private final Backoffs backoffs = new Backoffs();
    private volatile boolean stopping;
    private boolean closingConsumer;
    // A JVM error stopped the loop: it commits nothing more, as a crashed process would not.
    private boolean crashed;
    // The poll running now, and the next one, claimed ahead while it runs (its partitions paused).
    private @Nullable PollJob<T> job;
    private @Nullable PollJob<T> ahead;
    // Polls claimed ahead and given up, until their claims are released: the close waits for them.
    private final List<PollJob<T>> discarded = new ArrayList<>();
    private @Nullable Instant lastProgressCommit;
    private @Nullable Instant started;
    private boolean joined;
    private boolean joinReported;

    /**
     * @param claims  where the next poll's keys are claimed while one runs (one thread)
     * @param batches where each poll's batch is driven (one thread)
     * @param workers where partitions run
     * @param release closes the processor and publishers; run once, when no batch is running any more
     */
    PollLoop(KafkaConsumer<byte[], byte[]> consumer, IdempotentProcessor<T> processor, Executor claims,
             Executor batches, Executor workers, Settings settings, LoopEvents events, Runnable release) {
        this.consumer = consumer;
        this.processor = processor;
        this.claims = claims;
        this.batches = batches;
        this.workers = workers;
        this.settings = settings;
        this.events = events;
        this.release = release;
        this.commits = new OffsetCommits(consumer, events);
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
                commits.throwIfFailed();
                if (job == null && ahead != null) {
                    startAhead();
                } else if (ahead == null) {
                    resumeDue();
                    checkJoined();
                    ConsumerRecords<byte[], byte[]> polled = consumer.poll(job == null ? MAX_POLL_WAIT : AHEAD_POLL_WAIT);
                    if (!polled.isEmpty()) {
                        claimAhead(polled);
                    }
                    afterPoll();
                } else if (Objects.requireNonNull(job, "a poll runs while one is claimed ahead").await(MAX_POLL_WAIT)) {
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
            releaseWhenDone();
            events.ended();
        }
    }

    /** Claims a poll's keys ahead, on the claim thread; nothing more is fetched until it runs. */
    private void claimAhead(ConsumerRecords<byte[], byte[]> polled) {
        consumer.pause(consumer.assignment());
        ahead = new PollJob<>(processor, polled, workers, () -> stopping,
                failure -> events.failed(failure, false));
        claims.execute(ahead::claim);
    }

    /** The poll claimed ahead starts running (once its claim answered); the next one is fetched. */
    private void startAhead() {
        PollJob<T> next = Objects.requireNonNull(ahead, "a poll claimed ahead");
        job = next;
        ahead = null;
        commits.jobStarted();
        lastProgressCommit = settings.clock().instant();
        batches.execute(next::runClaimed);
        resumeNotDeferred();
    }

    /** After a poll while a batch runs: its end, or a progress commit. */
    private void afterPoll() {
        if (job == null) {
            return;
        }
        if (job.isDone()) {
            finishJob();
        } else {
            commitProgress();
        }
    }

    private void keepMembership() {
        commitProgress();
        ConsumerRecords<byte[], byte[]> early = consumer.poll(Duration.ZERO);
        // Records of a partition assigned before the listener could pause it: take them back for later.
        for (TopicPartition partition : early.partitions()) {
            consumer.seek(partition, early.records(partition).get(0).offset());
            consumer.pause(List.of(partition));
        }
    }

    private void commitProgress() {
        PollJob<T> running = Objects.requireNonNull(job, "a poll runs");
        Instant last = Objects.requireNonNull(lastProgressCommit, "set when the poll started");
        if (Duration.between(last, settings.clock().instant()).compareTo(PROGRESS_COMMIT_INTERVAL) >= 0) {
            lastProgressCommit = settings.clock().instant();
            commits.commitAsync(commits.ours(running.progress()));
        }
    }

    private void finishJob() {
        PollJob<T> done = Objects.requireNonNull(job, "a poll ran");
        job = null;
        PollResult result = done.result();
        commits.commitAsync(commits.ours(result.commits()));
        Instant now = settings.clock().instant();
        result.redeliveries().forEach((partition, redelivery) -> {
            if (commits.ours(partition)) {
                consumer.seek(partition, redelivery.offset());
                consumer.pause(List.of(partition));
                backoffs.pause(partition, now.plus(redelivery.delay()));
                if (ahead != null) {
                    // Its records there come after the one sent back: released unrun, fetched again.
                    ahead.stop(List.of(partition));
                }
            }
        });
        if (ahead == null) {
            resumeNotDeferred();
        }
    }

    private void resumeNotDeferred() {
        List<TopicPartition> resume = new ArrayList<>(consumer.assignment());
        resume.removeAll(backoffs.paused());
        consumer.resume(resume);
    }

    /**
     * Gives up the poll claimed ahead (its claims are released once they answered): a rebalance
     * takes partitions away, or the loop stops. Its partitions kept are sought back to its first
     * records and resumed, so those are fetched and claimed again; the others start, for their next
     * owner, from what was committed.
     */
    private void discardAhead(Collection<TopicPartition> handedOver) {
        if (ahead == null) {
            return;
        }
        PollJob<T> dropped = ahead;
        ahead = null;
        Map<TopicPartition, Long> first = dropped.firstOffsets();
        discarded.removeIf(PollJob::isDone);
        discarded.add(dropped);
        dropped.discard(claims);
        if (stopping || closingConsumer) {
            return;
        }
        first.forEach((partition, offset) -> {
            if (!handedOver.contains(partition) && consumer.assignment().contains(partition)) {
                consumer.seek(partition, offset);
            }
        });
        List<TopicPartition> kept = new ArrayList<>(consumer.assignment());
        kept.removeAll(handedOver);
        kept.removeAll(backoffs.paused());
        consumer.resume(kept);
    }

    /** Stop, finish or give up after the close timeout, commit what finished. */
    private void drain() throws InterruptedException {
        discardAhead(List.of());
        if (job == null) {
            commits.confirm(null);
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
            commits.confirm(null);
            return;
        }
        commits.confirm(null);
        commits.commit(commits.ours(job.progress()));
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

    /** Closes the processor once no batch runs any more (after a crash, without the one claimed ahead). */
    private void releaseWhenDone() {
        List<PollJob<T>> left = new ArrayList<>(Arrays.asList(job));
        if (!crashed) {
            left.add(ahead);
            left.addAll(discarded);
        }
        PollJob.allDone(left).whenComplete((r, e) -> release.run());
    }

    private void resumeDue() {
        if (backoffs.paused().isEmpty()) {
            return;
        }
        List<TopicPartition> due = backoffs.due(settings.clock().instant());
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
            backoffs.revoked(partitions, settings.clock().instant());
            if (partitions.isEmpty()) {
                return;
            }
            if (!crashed) {
                commits.confirm(partitions);
            }
            discardAhead(partitions);
            if (job == null) {
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
            Map<TopicPartition, OffsetAndMetadata> finished = commits.ours(job.progress());
            finished.keySet().retainAll(partitions);
            commits.commit(finished);
            commits.revoked(partitions);
            if (!idle && !closingConsumer) {
                LOG.info("partitions {} revoked while records still ran on them; the next owner finds those keys "
                        + "busy until they end", partitions);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            backoffs.revoked(partitions, settings.clock().instant());
            commits.lost(partitions);
            discardAhead(partitions);
            if (job != null) {
                job.stop(partitions);
                commits.revoked(partitions);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            LOG.info("assigned {}", partitions);
            if (!joined) {
                joined = true;
                events.joined();
            }
            if (ahead != null) {
                consumer.pause(partitions);
            }
            List<TopicPartition> waiting = backoffs.assigned(partitions, settings.clock().instant());
            if (!waiting.isEmpty()) {
                consumer.pause(waiting);
            }
        }
    }
}
