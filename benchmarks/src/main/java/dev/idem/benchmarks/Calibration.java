package dev.idem.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Which phase the machine is in, timed at the start and the end of each pass of a run: three fixed
 * tasks (sorting a million pseudo-random ints: the CPU; copying 64 MiB: memory; 20,000 one-byte
 * round trips over a loopback socket: the kernel's network path and wake-ups, what brokers and Redis
 * spend their time in), and the share of CPU time the hypervisor took from this machine meanwhile
 * (steal, from {@code /proc/stat}). The same code, brokers and Redis ran 2.5 to 4 times slower on
 * some days on this machine kind; a figure is read knowing its phase.
 */
final class Calibration {

    /**
     * The sort's time, best of ten, on this project's 2-core machine: the fastest reading so far
     * (2026-11-29: 72 to 103 ms).
     */
    static final double FAST_MILLIS = 72;
    private static final int SIZE = 1 << 20;
    /**
     * The loopback task's fastest time so far (ms, 20,000 round trips; 2026-11-29: 555 to 2,423 ms, the
     * slowest on an idle machine, where each round trip wakes a halted virtual CPU).
     */
    static final double FAST_LOOPBACK_MILLIS = 555;
    /** The memory task's fastest time so far (ms, 64 MiB copied four times; 2026-11-29: 27 to 40 ms). */
    static final double FAST_MEMORY_MILLIS = 27;
    private static final int ROUND_TRIPS = 20_000;
    // Kept so the JIT cannot drop the task.
    private static volatile int sink;

    /**
     * One reading.
     *
     * @param when          where in the run, e.g. "pass 1 start"
     * @param millis        the task's time, best of ten
     * @param stealPercent  CPU time taken by the hypervisor while the task ran, % of all CPU time; NaN if unknown
     */
    record Reading(String when, double millis, double memoryMillis, double loopbackMillis, double stealPercent) {

        /** The slowest of the three tasks against its fastest time seen. */
        double slowdown() {
            return Math.max(millis / FAST_MILLIS, Math.max(memoryMillis / FAST_MEMORY_MILLIS,
                    loopbackMillis / FAST_LOOPBACK_MILLIS));
        }

        /** fast (every task within 25% of its fastest time), slow (one 60% or more slower) or between. */
        String phase() {
            return slowdown() <= 1.25 ? "fast" : slowdown() >= 1.6 ? "slow" : "between";
        }

        String describe() {
            return String.format(Locale.ROOT, "%s: sort %.0f ms, memory %.0f ms, loopback %.0f ms (the slowest %.2f× its "
                    + "fastest: %s), steal %.1f%%", when, millis, memoryMillis, loopbackMillis, slowdown(), phase(),
                    stealPercent);
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
        return new Reading(when, best, memory(), loopback(), Ticks.now().stealPercentSince(before));
    }

    /** Copies 64 MiB four times, best of three rounds, ms. */
    private static double memory() {
        long[] from = new long[8 << 20];
        long[] to = new long[from.length];
        Arrays.fill(from, 7);
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 4; round++) {
            long start = System.nanoTime();
            for (int copy = 0; copy < 4; copy++) {
                System.arraycopy(from, 0, to, 0, from.length);
                from[copy] = to[from.length - 1 - copy];
            }
            long nanos = System.nanoTime() - start;
            sink += (int) to[round];
            if (round > 0) {
                best = Math.min(best, nanos / 1e6);
            }
        }
        return best;
    }

    /** One-byte round trips over a loopback TCP connection to a thread of this JVM, ms; NaN if it cannot. */
    private static double loopback() {
        try (java.net.ServerSocket server = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Thread echo = new Thread(() -> {
                try (java.net.Socket peer = server.accept()) {
                    peer.setTcpNoDelay(true);
                    java.io.InputStream in = peer.getInputStream();
                    java.io.OutputStream out = peer.getOutputStream();
                    int b;
                    while ((b = in.read()) >= 0) {
                        out.write(b);
                    }
                } catch (IOException e) {
                    // the timing side closed first
                }
            }, "calibration-echo");
            echo.setDaemon(true);
            echo.start();
            try (java.net.Socket socket = new java.net.Socket(server.getInetAddress(), server.getLocalPort())) {
                socket.setTcpNoDelay(true);
                java.io.InputStream in = socket.getInputStream();
                java.io.OutputStream out = socket.getOutputStream();
                for (int i = 0; i < 2_000; i++) {
                    out.write(1);
                    in.read();
                }
                long start = System.nanoTime();
                for (int i = 0; i < ROUND_TRIPS; i++) {
                    out.write(1);
                    in.read();
                }
                return (System.nanoTime() - start) / 1e6;
            }
        } catch (IOException e) {
            return Double.NaN;
        }
    }
}
