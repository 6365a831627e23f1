package dev.idem.benchmarks;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One steady-rate latency run: a warm-up the consumer must have handled first (its group joined,
 * its connections open), then messages sent at the plan's rate, each carrying the time it was
 * sent; the latency of a message is from then to the end of its handler.
 */
final class Steady {

    /** Messages sent and handled before measuring. */
    static final int WARM_UP = 200;
    /** A message slower than this is counted by the second it was sent in, to tell stalls from noise. */
    private static final long SLOW_NANOS = Duration.ofMillis(10).toNanos();
    private static final Logger LOG = LoggerFactory.getLogger(Steady.class);

    private final Plan plan;
    private final int measured;
    private final Meter meter = new Meter();
    private final Latencies latencies;
    private final AtomicIntegerArray slowBySecond;
    private volatile long measuringFrom = Long.MAX_VALUE;

    Steady(Plan plan) {
        this.plan = plan;
        this.measured = (int) (plan.steadyRate() * plan.steady().toSeconds());
        this.latencies = new Latencies(measured);
        this.slowBySecond = new AtomicIntegerArray((int) plan.steady().toSeconds() + 1);
    }

    Meter meter() {
        return meter;
    }

    /** Messages sent in all, warm-up included. */
    int total() {
        return WARM_UP + measured;
    }

    /** Time the consumer gets for all of them. */
    Duration limit() {
        return plan.steady().multipliedBy(3).plusSeconds(30);
    }

    /** Sends the warm-up, waits until it was handled, then sends the measured messages at the rate. */
    void send(BiConsumer<Integer, byte[]> sender) {
        try {
            pace(sender, 0, WARM_UP);
            long waiting = System.nanoTime();
            while (meter.handledSoFar() < WARM_UP) {
                if (System.nanoTime() - waiting > Duration.ofSeconds(60).toNanos()) {
                    throw new IllegalStateException("the warm-up was not handled within 60 s");
                }
                Thread.sleep(5);
            }
            measuringFrom = System.nanoTime();
            pace(sender, WARM_UP, measured);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void pace(BiConsumer<Integer, byte[]> sender, int from, int count) {
        long interval = 1_000_000_000L / plan.steadyRate();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            LockSupport.parkNanos(start + i * interval - System.nanoTime());
            sender.accept(from + i, Payloads.timed(from + i));
        }
    }

    /** A handler is ending for this payload (the consumer's wrapper counts it on the meter). */
    void handled(byte[] payload) {
        long sentAt = ByteBuffer.wrap(payload).getLong(0);
        if (sentAt >= measuringFrom) {
            long latency = System.nanoTime() - sentAt;
            latencies.add(latency);
            if (latency > SLOW_NANOS) {
                int second = (int) Math.min((sentAt - measuringFrom) / 1_000_000_000L, slowBySecond.length() - 1);
                slowBySecond.incrementAndGet(second);
            }
        }
    }

    Latency summary(String broker, String variant) {
        if (latencies.size() < measured) {
            throw new IllegalStateException(broker + " " + variant + ": " + latencies.size() + " of " + measured
                    + " messages measured");
        }
        LOG.info("{} steady {}: messages over 10 ms by the second they were sent in: {}", broker, variant,
                slowBySecond);
        return latencies.summary(broker, variant);
    }
}
