package dev.idem.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Which phase the machine is in: a fixed CPU task (sorting a million pseudo-random ints), timed at
 * the start and the end of each pass of a run, and the share of CPU time the hypervisor took from this
 * machine meanwhile (steal, from {@code /proc/stat}). The same code, brokers and Redis ran 2.5 to 4
 * times slower on some days on this machine kind; a figure is read knowing its phase.
 */
final class Calibration {

    /**
     * The task's time, best of ten, on this project's 2-core machine in a fast phase, in milliseconds:
     * the fastest reading of 2026-11-29 (readings that day: 74 to 103 ms).
     */
    static final double FAST_MILLIS = 74;
    private static final int SIZE = 1 << 20;
    // Kept so the JIT cannot drop the task.
    private static volatile int sink;

    /**
     * One reading.
     *
     * @param when          where in the run, e.g. "pass 1 start"
     * @param millis        the task's time, best of ten
     * @param stealPercent  CPU time taken by the hypervisor while the task ran, % of all CPU time; NaN if unknown
     */
    record Reading(String when, double millis, double stealPercent) {

        /** The task's time over a fast phase's. */
        double slowdown() {
            return millis / FAST_MILLIS;
        }

        /** fast (within 25% of a fast phase's time), slow (60% or more slower) or between. */
        String phase() {
            return slowdown() <= 1.25 ? "fast" : slowdown() >= 1.6 ? "slow" : "between";
        }

        String describe() {
            return String.format(Locale.ROOT, "%s: %.0f ms (%.2f× a fast phase: %s), steal %.1f%%", when, millis,
                    slowdown(), phase(), stealPercent);
        }
    }

    /**
     * CPU time counters of the whole machine from {@code /proc/stat}, in ticks.
     *
     * @param steal ticks the hypervisor took
     * @param total every tick
     */
    record Ticks(long steal, long total) {

        static Ticks now() {
            try {
                String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
                long total = 0;
                // cpu user nice system idle iowait irq softirq steal guest guest_nice: guests are in user.
                for (int i = 1; i <= 8 && i < fields.length; i++) {
                    total += Long.parseLong(fields[i]);
                }
                return new Ticks(fields.length > 8 ? Long.parseLong(fields[8]) : 0, total);
            } catch (IOException | RuntimeException e) {
                return new Ticks(-1, -1);
            }
        }

        /** Steal since {@code before}, % of all CPU time; NaN if unknown. */
        double stealPercentSince(Ticks before) {
            long total = this.total - before.total;
            return before.total < 0 || total <= 0 ? Double.NaN : 100.0 * (steal - before.steal) / total;
        }
    }

    private Calibration() {
    }

    /** Times the task, best of ten after three runs that warm it. */
    static Reading take(String when) {
        Ticks before = Ticks.now();
        int[] source = new int[SIZE];
        int x = 0x9E3779B9;
        for (int i = 0; i < SIZE; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            source[i] = x;
        }
        double best = Double.MAX_VALUE;
        for (int run = 0; run < 13; run++) {
            int[] copy = source.clone();
            long start = System.nanoTime();
            Arrays.sort(copy);
            long nanos = System.nanoTime() - start;
            sink += copy[SIZE / 2];
            if (run >= 3) {
                best = Math.min(best, nanos / 1e6);
            }
        }
        return new Reading(when, best, Ticks.now().stealPercentSince(before));
    }
}
