package dev.idem.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The throughput rounds, the same for every broker: a warm-up round, then {@code plan.rounds()}
 * rounds of raw, idem and naive, each variant with a new group, its Redis requests counted and its
 * keys deleted afterwards.
 */
final class Rounds {

    private static final Logger LOG = LoggerFactory.getLogger(Rounds.class);
    static final List<String> VARIANTS = List.of("raw", "idem", "naive");
    // The requests each variant sends to Redis (the claim script; the naive wrapper's SETs).
    private static final Map<String, Set<String>> REQUESTS = Map.of("raw", Set.of(), "idem", Set.of("evalsha", "eval"),
            "idem-2", Set.of("evalsha", "eval"), "idem-traced", Set.of("evalsha", "eval"), "camel", Set.of("set"),
            "naive", Set.of("set"));

    /** Runs one variant on a new group until it has every message or {@code limit} passed. */
    interface Variant {
        Meter.Measured run(String variant, String group, Duration limit) throws Exception;
    }

    private Rounds() {
    }

    /** Every round's results but the warm-up's. */
    static List<Result> run(String broker, Plan plan, RedisProbe probe, Variant variants) throws Exception {
        return run(broker, plan, probe, VARIANTS, variants);
    }

    /** Every round's results but the warm-up's, for these variants. */
    static List<Result> run(String broker, Plan plan, RedisProbe probe, List<String> names, Variant variants)
            throws Exception {
        List<Result> results = new ArrayList<>();
        for (int round = 0; round <= plan.rounds(); round++) {
            Duration limit = round == 0 ? plan.warmUp() : plan.limit();
            for (String variant : names) {
                String group = "bench-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
                Map<String, Long> before = probe.commandCalls();
                CpuProbe.Sample cpuBefore = probe.cpu();
                Meter.Measured measured = variants.run(variant, group, limit);
                // Costs per message over every message the run consumed (a PostgreSQL round drains its topic).
                CpuProbe.Sample cpu = CpuProbe.perMessage(cpuBefore, probe.cpu(), measured.consumed());
                Map<String, Long> after = probe.commandCalls();
                probe.forget("bench:" + group + ":*");
                probe.forget(group + ":*");
                Result result = new Result(broker, variant, round, measured.messages(), measured.seconds(),
                        RedisProbe.of(before, after, REQUESTS.get(variant)) / (double) measured.consumed(),
                        RedisProbe.total(before, after) / (double) measured.consumed(), measured.database(),
                        cpu.jvm(), cpu.redis(), 1);
                LOG.info("{} round {} {}: {} messages in {} s = {} messages/s{}", broker, round, variant,
                        result.messages(), String.format("%.2f", result.seconds()),
                        String.format("%.0f", result.perSecond()), round == 0 ? " (warm-up, not reported)" : "");
                LOG.info("{} round {} {}: Redis commands {}", broker, round, variant, RedisProbe.byCommand(before, after));
                if (round > 0) {
                    results.add(result);
                }
            }
        }
        return results;
    }
}
