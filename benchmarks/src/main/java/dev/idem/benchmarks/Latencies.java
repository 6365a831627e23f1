package dev.idem.benchmarks;

import java.util.Arrays;

/** Per-message latencies in nanoseconds; percentiles in milliseconds. Thread-safe. */
final class Latencies {

    private final long[] values;
    private int size;

    Latencies(int capacity) {
        values = new long[capacity];
    }

    synchronized void add(long nanos, int times) {
        for (int i = 0; i < times && size < values.length; i++) {
            values[size++] = nanos;
        }
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
}
