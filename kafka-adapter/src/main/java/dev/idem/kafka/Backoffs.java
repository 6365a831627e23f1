package dev.idem.kafka;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * Which partitions of a poll loop wait out a record's backoff, until when, also across a rebalance:
 * an eager rebalance takes every partition and gives most back at once, and a record sent back must
 * still wait its backoff there, or a storm of rebalances would spend a failing record's attempts
 * inside a short outage. Used by the poll loop's thread only.
 */
final class Backoffs {

    private final Map<TopicPartition, Instant> pausedUntil = new HashMap<>();
    // Backoffs of partitions taken away, for when the same partitions come back.
    private final Map<TopicPartition, Instant> ofRevoked = new HashMap<>();

    /** A record of {@code partition} was sent back: it waits until {@code until}. */
    void pause(TopicPartition partition, Instant until) {
        pausedUntil.put(partition, until);
    }

    /** The partitions waiting out a backoff now. */
    Set<TopicPartition> paused() {
        return pausedUntil.keySet();
    }

    /** Takes the partitions whose backoff ended by {@code now}. */
    List<TopicPartition> due(Instant now) {
        List<TopicPartition> due = new ArrayList<>();
        pausedUntil.entrySet().removeIf(entry -> {
            if (entry.getValue().isAfter(now)) {
                return false;
            }
            due.add(entry.getKey());
            return true;
        });
        return due;
    }

    /** Partitions revoked or lost: their backoffs are kept for when they come back. */
    void revoked(Collection<TopicPartition> partitions, Instant now) {
        ofRevoked.values().removeIf(until -> !until.isAfter(now));
        for (TopicPartition partition : partitions) {
            Instant until = pausedUntil.remove(partition);
            if (until != null) {
                ofRevoked.put(partition, until);
            }
        }
    }

    /** Partitions assigned: returns those that came back with a backoff still running, to pause. */
    List<TopicPartition> assigned(Collection<TopicPartition> partitions, Instant now) {
        List<TopicPartition> waiting = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            Instant until = ofRevoked.remove(partition);
            if (until != null && until.isAfter(now)) {
                pausedUntil.put(partition, until);
                waiting.add(partition);
            }
        }
        return waiting;
    }
}
