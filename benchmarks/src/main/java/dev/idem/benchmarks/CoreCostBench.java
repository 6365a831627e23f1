package dev.idem.benchmarks;

import com.sun.management.ThreadMXBean;
import dev.idem.core.Batch;
import dev.idem.core.DedupCheck;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.redis.RedisClaimStore;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.redisson.api.RedissonClient;

/**
 * Idem's own consumer-side cost without a broker: batches of 500 envelopes claimed, run by a handler
 * that does nothing and completed through {@link IdempotentProcessor} and {@link RedisClaimStore} on
 * the run's Redis, as a Kafka poll is. The broker rounds' JVM figure holds the in-process brokers and
 * moves with the machine's phase several times over; bytes allocated per record do not, and CPU here
 * is Idem's and its Redis client's alone.
 */
final class CoreCostBench {

    /**
     * @param records           records per measured round
     * @param jvmCpuMicros      this JVM's CPU per record, µs, per measured round
     * @param allocatedBytes    bytes allocated by every thread of this JVM per record, per measured round
     * @param recordsPerSecond  per measured round, one thread claiming, running and completing in turn
     */
    record Figures(int records, List<Double> jvmCpuMicros, List<Double> allocatedBytes, List<Double> recordsPerSecond) {
    }

    private static final int BATCH = 500;
    private static final byte[] BODY = new byte[200];

    private final RedissonClient redisson;
    private final Plan plan;

    CoreCostBench(RedissonClient redisson, Plan plan) {
        this.redisson = redisson;
        this.plan = plan;
    }

    /** Four warm-up rounds (the JIT is still compiling in the second), then three measured, each of 300 batches (60 in a quick run). */
    Figures run() {
        int batches = plan.quick() ? 60 : 300;
        String prefix = "bench-core-" + System.nanoTime() + ":";
        IdempotentProcessor<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> {
                })
                .claims(RedisClaimStore.builder(redisson).keyPrefix(prefix).build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> {
                    throw new IllegalStateException("no dead letters expected");
                })
                .group("core").build();
        CpuProbe cpu = new CpuProbe(redisson);
        List<Double> cpuPerRecord = new ArrayList<>();
        List<Double> bytesPerRecord = new ArrayList<>();
        List<Double> rates = new ArrayList<>();
        long next = 0;
        try (processor) {
            for (int round = 0; round < 7; round++) {
                CpuProbe.Sample before = cpu.sample();
                long allocated = allocated();
                long started = System.nanoTime();
                for (int b = 0; b < batches; b++) {
                    List<Envelope> envelopes = new ArrayList<>(BATCH);
                    for (int i = 0; i < BATCH; i++, next++) {
                        envelopes.add(new Envelope("orders", 0, Long.toString(next), "m" + next, 1, Map.of(), BODY,
                                ("order-" + next).getBytes(StandardCharsets.UTF_8)));
                    }
                    try (Batch<byte[]> batch = processor.open(envelopes)) {
                        for (int i = 0; i < BATCH; i++) {
                            batch.process(i);
                        }
                    }
                }
                long records = (long) batches * BATCH;
                if (round >= 4) {
                    cpuPerRecord.add(CpuProbe.perMessage(before, cpu.sample(), records).jvm());
                    bytesPerRecord.add((allocated() - allocated) / (double) records);
                    rates.add(records / ((System.nanoTime() - started) / 1e9));
                }
            }
        } finally {
            redisson.getKeys().deleteByPattern(prefix + "*");
        }
        return new Figures(batches * BATCH, cpuPerRecord, bytesPerRecord, rates);
    }

    /** Bytes allocated so far by the live threads of this JVM. */
    private static long allocated() {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            sum += Math.max(0, bytes);
        }
        return sum;
    }

    static String markdown(Figures f) {
        return String.format(Locale.ROOT, """

                Idem without a broker: batches of 500 envelopes claimed, run by a handler that does nothing and \
                completed through `IdempotentProcessor` and `RedisClaimStore` (Redis-only mode), one thread, \
                %,d records a round, three rounds after four of warm-up. CPU is this JVM's (Idem and its Redis \
                client; no broker in it); allocations are every thread's.

                | per record, by round | 1 | 2 | 3 |
                |---|---:|---:|---:|
                | JVM CPU (µs) | %.2f | %.2f | %.2f |
                | bytes allocated | %,.0f | %,.0f | %,.0f |
                | records/s | %,.0f | %,.0f | %,.0f |
                """, f.records(), f.jvmCpuMicros().get(0), f.jvmCpuMicros().get(1), f.jvmCpuMicros().get(2),
                f.allocatedBytes().get(0), f.allocatedBytes().get(1), f.allocatedBytes().get(2),
                f.recordsPerSecond().get(0), f.recordsPerSecond().get(1), f.recordsPerSecond().get(2));
    }
}
