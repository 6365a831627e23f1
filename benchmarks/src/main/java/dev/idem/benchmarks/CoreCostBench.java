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
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Idem's own consumer-side cost without a broker: batches of 500 envelopes claimed, run by a handler
 * that does nothing and completed through {@link IdempotentProcessor} and {@link RedisClaimStore} on
 * the run's Redis, as a Kafka poll is. The broker rounds' JVM figure holds the in-process brokers and
 * moves with the machine's phase several times over; bytes allocated per record do not, and CPU here
 * is Idem's and its Redis client's alone. Then the Redis client's part on its own: the same calls
 * (a claim of 500 key names with their arguments, a completion of one batch record) made through
 * Redisson to a script that answers as the claim script does and writes nothing.
 */
final class CoreCostBench {

    /**
     * @param records           records per measured round
     * @param jvmCpuMicros      this JVM's CPU per record, µs, per measured round
     * @param allocatedBytes    bytes allocated by every thread of this JVM per record, per measured round
     * @param recordsPerSecond  per measured round, one thread claiming, running and completing in turn
     */
    record Figures(int records, List<Double> jvmCpuMicros, List<Double> allocatedBytes, List<Double> recordsPerSecond,
                   List<Double> clientCpuMicros, List<Double> clientBytes) {
    }

    // Answers a claim of n keys (then its epoch and batch record keys) as the claim script answers n
    // fresh compact keys, and a completion of one batch record with 1; writes nothing.
    private static final String CLIENT_ONLY = """
            if ARGV[1] == 'complete' then return {1} end
            local out = {'c:1764480000000000:1:0:0:1::' .. string.char(31)}
            for i = 2, #KEYS - 2 do out[i] = 'c' end
            return {table.concat(out, string.char(30))}
            """;

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
        List<Double> clientCpu = new ArrayList<>();
        List<Double> clientBytes = new ArrayList<>();
        clientOnly(batches, cpu, clientCpu, clientBytes);
        return new Figures(batches * BATCH, cpuPerRecord, bytesPerRecord, rates, clientCpu, clientBytes);
    }

    /** The Redis client's part of the rounds above: their calls' keys and arguments, to a script that writes nothing. */
    private void clientOnly(int batches, CpuProbe cpu, List<Double> cpuPerRecord, List<Double> bytesPerRecord) {
        RScript script = redisson.getScript(StringCodec.INSTANCE);
        String sha = script.scriptLoad(CLIENT_ONLY);
        String prefix = "bench-client:core:orders:";
        long next = 0;
        for (int round = 0; round < 7; round++) {
            CpuProbe.Sample before = cpu.sample();
            long allocated = allocated();
            for (int b = 0; b < batches; b++) {
                List<Object> keys = new ArrayList<>(BATCH + 2);
                StringBuilder perKey = new StringBuilder(BATCH * 16);
                for (int i = 0; i < BATCH; i++, next++) {
                    keys.add(prefix + "order-" + next);
                    perKey.append(1).append(':').append(0).append(',');
                }
                keys.add("bench-client:epoch");
                keys.add("bench-client:batch:" + next);
                script.evalSha(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.MULTI, keys, "claim", "owner-0000",
                        "30000", "60000", "3660000", "0123456789", perKey.toString(), "bench-client:pending", "60000",
                        "bench-client:batch:");
                script.evalSha(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.MULTI,
                        List.of("bench-client:batch:" + next), "complete", "owner-0000", "3600000", "60000", "b",
                        "3600000", "", "3660000", "", "bench-client:pending", "60000", "bench-client:batch:");
            }
            if (round >= 4) {
                long records = (long) batches * BATCH;
                cpuPerRecord.add(CpuProbe.perMessage(before, cpu.sample(), records).jvm());
                bytesPerRecord.add((allocated() - allocated) / (double) records);
            }
        }
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
                | the Redis client alone: JVM CPU (µs) | %.2f | %.2f | %.2f |
                | the Redis client alone: bytes allocated | %,.0f | %,.0f | %,.0f |

                The Redis client alone: the same calls (a claim of 500 key names with their arguments, a \
                completion of one batch record) made through Redisson to a script that answers as the claim \
                script does and writes nothing.
                """, f.records(), f.jvmCpuMicros().get(0), f.jvmCpuMicros().get(1), f.jvmCpuMicros().get(2),
                f.allocatedBytes().get(0), f.allocatedBytes().get(1), f.allocatedBytes().get(2),
                f.recordsPerSecond().get(0), f.recordsPerSecond().get(1), f.recordsPerSecond().get(2),
                f.clientCpuMicros().get(0), f.clientCpuMicros().get(1), f.clientCpuMicros().get(2),
                f.clientBytes().get(0), f.clientBytes().get(1), f.clientBytes().get(2));
    }
}
