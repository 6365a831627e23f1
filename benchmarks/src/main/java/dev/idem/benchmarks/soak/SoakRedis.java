package dev.idem.benchmarks.soak;

import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * The soak's Redis: the topology the consumers connect to ({@code soak.redis}) and the fault it
 * suffers in the chaos loop, with the data each fault lost. Single: killed and started again empty.
 * Sentinel: a failover that loses the primary's last writes. Cluster: slots moved while claims flow.
 * Not thread-safe: the chaos loop alone drives it.
 */
interface SoakRedis extends AutoCloseable {

    /**
     * Data Redis lost at {@code at}: every record ({@code kept} null), or every record but those of
     * the ids in {@code kept} (what the promoted replica held). Writes from {@code from} on were lost
     * with it (a primary whose replication was held); {@code from} is {@code at} when none were.
     */
    record Loss(Instant from, Instant at, Set<String> kept) {

        /** Whether {@code id}'s done record was lost here. */
        boolean lost(String id) {
            return kept == null || !kept.contains(id);
        }
    }

    /** What the consumers connect with, as a Redis URL ({@code redis://}, {@code redis-sentinel://}, {@code redis-cluster://}). */
    String url();

    /** Starts the fault, which may end later ({@link #heal}); returns what to put on the timeline. */
    String fault(Random random) throws Exception;

    /** Ends what is due of a fault under way; returns what to put on the timeline, or null. */
    String heal() throws Exception;

    /** Whether a fault is under way. */
    boolean underWay();

    /** How many faults it suffered, and what to call them in the report. */
    int faults();

    String faultName();

    /** The data it lost, in time order. */
    List<Loss> losses();
}
