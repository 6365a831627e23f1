package dev.idem.rocketmq.internal;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client instance names unique per process. RocketMQ names a client {@code ip@instanceName}, and
 * two clients of one group with the same name are one consumer to the rebalance: both get the same
 * queues and another queue gets none. {@code System.identityHashCode} repeats across JVMs started
 * alike, so the name holds the process id, a counter within the process and a random part (the
 * process id repeats across hosts and containers, where the ip usually differs but not always).
 * Not public API. Thread-safe.
 */
public final class InstanceNames {

    private static final AtomicLong COUNTER = new AtomicLong();

    private InstanceNames() {
    }

    /** A fresh name starting with {@code prefix}. */
    public static String next(String prefix) {
        return prefix + "-" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet() + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }
}
