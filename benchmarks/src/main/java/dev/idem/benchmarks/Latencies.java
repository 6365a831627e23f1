package dev.idem.benchmarks;

import java.util.Arrays;

/** Per-message latencies in nanoseconds; percentiles in milliseconds. Thread-safe. */
final class Latencies {

    private final long[] values;
    private int size;

    Latencies(int capacity) {
        values = new long[capacity];
    }

    synchronized void add(long nanos) {
        if (size < values.length) {
            values[size++] = nanos;
        }
    }

    synchronized int size() {
        return size;
    }

    synchronized double percentileMillis(double percentile) {
        if (size == 0) {
            return 0;
        }
        long[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int index = (int) Math.min(size - 1, Math.ceil(percentile / 100.0 * size) - 1);
        return sorted[Math.max(0, index)] / 1_000_000.0;
    }

    Latency summary(String broker, String variant) {
        return new Latency(broker, variant, size(), percentileMillis(50), percentileMillis(99), percentileMillis(99.9));
    }
}
