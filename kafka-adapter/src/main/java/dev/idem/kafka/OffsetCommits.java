package dev.idem.kafka;

import dev.idem.kafka.internal.KafkaFailures;
import dev.idem.kafka.internal.LoopEvents;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits the offsets of a {@link PollLoop}'s finished records: asynchronously as they finish, and
 * synchronously, again, when a partition is handed over and at the close, so that a lost
 * asynchronous commit outlives neither; never for a partition revoked while its records ran.
 * Confined to the poll thread.
 */
final class OffsetCommits {

    private static final Logger LOG = LoggerFactory.getLogger(PollLoop.class);

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final LoopEvents events;
    // Partitions revoked or lost while the running poll ran: its results are no longer ours to commit.
    private final Set<TopicPartition> revokedDuringJob = new HashSet<>();
    private final Map<TopicPartition, OffsetAndMetadata> committedInJob = new HashMap<>();
    // The latest offsets handed to commitAsync, per partition.
    private final Map<TopicPartition, OffsetAndMetadata> committedAsync = new HashMap<>();
    // A commitAsync the consumer cannot go on after (e.g. not authorized): thrown on the poll thread.
    private volatile @Nullable RuntimeException asyncFailure;

    OffsetCommits(KafkaConsumer<byte[], byte[]> consumer, LoopEvents events) {
        this.consumer = consumer;
        this.events = events;
    }

    /** A new poll starts running: nothing of it is committed or revoked yet. */
    void jobStarted() {
        committedInJob.clear();
        revokedDuringJob.clear();
    }

    /** These partitions were revoked or lost while the running poll ran. */
    void revoked(Collection<TopicPartition> partitions) {
        revokedDuringJob.addAll(partitions);
    }

    /** Whether this partition is still ours for the running poll's results. */
    boolean ours(TopicPartition partition) {
        return consumer.assignment().contains(partition) && !revokedDuringJob.contains(partition);
    }

    /** Lost partitions: what went asynchronously for them is not committed again. */
    void lost(Collection<TopicPartition> partitions) {
        committedAsync.keySet().removeAll(partitions);
    }

    /** @throws RuntimeException an asynchronous commit's failure the consumer cannot go on after */
    void throwIfFailed() {
        RuntimeException failure = asyncFailure;
        if (failure != null) {
            throw failure;
        }
    }

    /** Offsets of partitions still ours, and beyond what the running poll already committed. */
    Map<TopicPartition, OffsetAndMetadata> ours(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<TopicPartition, OffsetAndMetadata> result = new HashMap<>();
        offsets.forEach((partition, offset) -> {
            OffsetAndMetadata before = committedInJob.get(partition);
            if (ours(partition) && (before == null || before.offset() < offset.offset())) {
                result.put(partition, offset);
            }
        });
        return result;
    }

    /** Commits and waits; a recoverable failure is logged (the records are redelivered and found done). */
    void commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
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
     * that must have landed (a revoked partition, the close) go through {@link #confirm}, after
     * these in order.
     */
    void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        consumer.commitAsync(offsets, (committed, failure) -> {
            if (failure == null) {
                return;
            }
            if (failure instanceof RuntimeException e && !KafkaFailures.isRecoverableCommitFailure(e)) {
                asyncFailure = e;
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
    void confirm(@Nullable Collection<TopicPartition> partitions) {
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
}
