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
        Measured idem;
        try (processor) {
            idem = rounds(cpu, batches, first -> {
                List<Envelope> envelopes = new ArrayList<>(BATCH);
                for (long n = first; n < first + BATCH; n++) {
                    envelopes.add(new Envelope("orders", 0, Long.toString(n), "m" + n, 1, Map.of(), BODY,
                            ("order-" + n).getBytes(StandardCharsets.UTF_8)));
                }
                try (Batch<byte[]> batch = processor.open(envelopes)) {
                    for (int i = 0; i < BATCH; i++) {
                        batch.process(i);
                    }
                }
            });
        } finally {
            redisson.getKeys().deleteByPattern(prefix + "*");
        }
        Measured client = clientOnly(cpu, batches);
        return new Figures(batches * BATCH, idem.cpuMicros(), idem.bytes(), idem.rates(), client.cpuMicros(),
                client.bytes());
    }

    /** One batch of {@value #BATCH} records, numbered from {@code first}. */
    private interface BatchWork {
        void run(long first) throws Exception;
    }

    /** Per record, for each measured round: this JVM's CPU (µs), bytes allocated, and records per second. */
    private record Measured(List<Double> cpuMicros, List<Double> bytes, List<Double> rates) {
    }

    /** Seven rounds of {@code batches} batches each; the last three measured, after four of warm-up. */
    private static Measured rounds(CpuProbe cpu, int batches, BatchWork work) {
        Measured measured = new Measured(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        long records = (long) batches * BATCH;
        long next = 0;
        for (int round = 0; round < 7; round++) {
            CpuProbe.Sample before = cpu.sample();
            long allocated = allocated();
            long started = System.nanoTime();
            for (int b = 0; b < batches; b++, next += BATCH) {
                try {
                    work.run(next);
                } catch (Exception e) {
                    throw new IllegalStateException("a batch of the core rounds failed", e);
                }
            }
            if (round >= 4) {
                measured.cpuMicros().add(CpuProbe.perMessage(before, cpu.sample(), records).jvm());
                measured.bytes().add((allocated() - allocated) / (double) records);
                measured.rates().add(records / ((System.nanoTime() - started) / 1e9));
            }
        }
        return measured;
    }

    /** The Redis client's part of the rounds above: their calls' keys and arguments, to a script that writes nothing. */
    private Measured clientOnly(CpuProbe cpu, int batches) {
        RScript script = redisson.getScript(StringCodec.INSTANCE);
        String sha = script.scriptLoad(CLIENT_ONLY);
        String prefix = "bench-client:core:orders:";
        return rounds(cpu, batches, first -> {
            List<Object> keys = new ArrayList<>(BATCH + 2);
            StringBuilder perKey = new StringBuilder(BATCH * 16);
            for (long n = first; n < first + BATCH; n++) {
                keys.add(prefix + "order-" + n);
                perKey.append(1).append(':').append(0).append(',');
            }
            keys.add("bench-client:epoch");
            keys.add("bench-client:batch:" + first);
            script.evalSha(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.MULTI, keys, "claim", "owner-0000",
                    "30000", "60000", "3660000", "0123456789", perKey.toString(), "bench-client:pending", "60000",
                    "bench-client:batch:");
            script.evalSha(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.MULTI,
                    List.of("bench-client:batch:" + first), "complete", "owner-0000", "3600000", "60000", "b",
                    "3600000", "", "3660000", "", "bench-client:pending", "60000", "bench-client:batch:");
        });
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
