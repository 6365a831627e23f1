package dev.idem.benchmarks;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** The markdown report: throughput per round and its median, latency at a steady rate, the targets. */
final class Report {

    // The performance issue's targets.
    private static final double KAFKA_VS_RAW = 0.5;
    private static final double KAFKA_VS_NAIVE = 10;
    private static final double ROCKETMQ_VS_RAW = 0.8;
    private static final double ADDED_P99_MILLIS = 2;
    private static final double COMMANDS = 1.1;
    private static final double ROUND_TRIPS = 0.01;
    private static final double BYTES_PER_KEY = 120;

    private final Plan plan;
    private final List<Result> results;
    private final List<Latency> latencies;
    private final MemoryBench.Memory memory;

    Report(Plan plan, List<Result> results, List<Latency> latencies, MemoryBench.Memory memory) {
        this.plan = plan;
        this.results = results;
        this.latencies = latencies;
        this.memory = memory;
    }

    /** Median, min and max of a figure over the rounds. */
    record Spread(double median, double min, double max) {
        static Spread of(List<Double> values) {
            List<Double> sorted = new ArrayList<>(values);
            Collections.sort(sorted);
            int n = sorted.size();
            double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
            return new Spread(median, sorted.get(0), sorted.get(n - 1));
        }
    }

    private List<Result> of(String broker, String variant) {
        return results.stream().filter(r -> r.broker().equals(broker) && r.variant().equals(variant)).toList();
    }

    private Spread spread(String broker, String variant, ToDoubleFunction<Result> figure) {
        return Spread.of(of(broker, variant).stream().map(figure::applyAsDouble).toList());
    }

    /** The per-round ratio of two variants' throughput (rounds pair them: same minute, same machine state). */
    Spread ratio(String broker, String variant, String to) {
        List<Result> a = of(broker, variant);
        List<Result> b = of(broker, to);
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            ratios.add(a.get(i).perSecond() / b.get(i).perSecond());
        }
        return Spread.of(ratios);
    }

    private Latency latency(String broker, String variant) {
        return latencies.stream().filter(l -> l.broker().equals(broker) && l.variant().equals(variant)).findFirst()
                .orElseThrow();
    }

    String markdown() {
        StringBuilder out = new StringBuilder("# Idem benchmarks\n\n");
        out.append(String.format(Locale.ROOT, "Run %s on %d cores, Java %s; in-process brokers from the test kit, "
                        + "Redis on loopback.%s%n%n", Instant.now(), Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), plan.quick() || plan.only() != null
                        ? " **A partial or quick run: not the results of record.**" : ""));
        out.append(String.format(Locale.ROOT, "Throughput: each variant consumes its topic (%,d Kafka records, %,d "
                        + "RocketMQ messages) from the start with a new group, until it has all of them or has run "
                        + "%d s; %d round(s) interleaving raw, idem, naive after a warm-up round that is not "
                        + "reported. Idem runs in Redis-only mode with a handler that does nothing, so the figures "
                        + "are Idem's own cost.%n%n", plan.kafkaMessages(), plan.rocketMqMessages(),
                plan.limit().toSeconds(), plan.rounds()));
        out.append("| broker | variant | msg/s median | min | max | × raw median (min–max) "
                + "| Redis round trips/msg | Redis commands/msg |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (String broker : brokers()) {
            for (String variant : List.of("raw", "idem", "naive")) {
                Spread rate = spread(broker, variant, Result::perSecond);
                Spread ratio = ratio(broker, variant, "raw");
                out.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %.0f | %.2f (%.2f–%.2f) | %.4f | %.3f |%n",
                        broker, variant, rate.median(), rate.min(), rate.max(), ratio.median(), ratio.min(),
                        ratio.max(), spread(broker, variant, Result::roundTripsPerMessage).median(),
                        spread(broker, variant, Result::commandsPerMessage).median()));
            }
        }
        out.append(String.format(Locale.ROOT, "%nLatency at a steady %,d msg/s for %d s (after %d warm-up messages), "
                        + "from just before the send to the end of the handler, ms:%n%n", plan.steadyRate(),
                plan.steady().toSeconds(), Steady.WARM_UP));
        out.append("| broker | variant | messages | p50 | p99 | p99.9 |\n|---|---|---:|---:|---:|---:|\n");
        for (Latency l : latencies) {
            out.append(String.format(Locale.ROOT, "| %s | %s | %d | %.2f | %.2f | %.2f |%n", l.broker(), l.variant(),
                    l.messages(), l.p50(), l.p99(), l.p999()));
        }
        out.append(String.format(Locale.ROOT, "%nRedis memory per done key: %.0f bytes (MEMORY USAGE over %d keys, "
                + "key names of %d characters).%n%n", memory.bytesPerKey(), memory.sampled(), memory.keyLength()));
        out.append("| target | measured | met |\n|---|---:|---|\n");
        if (plan.runs("kafka")) {
            target(out, "Kafka: Idem ≥ 0.5× raw (median of rounds)", ratio("kafka", "idem", "raw").median(), KAFKA_VS_RAW,
                    true);
            target(out, "Kafka: Idem ≥ 10× naive", ratio("kafka", "idem", "naive").median(), KAFKA_VS_NAIVE, true);
        }
        if (plan.runs("rocketmq")) {
            target(out, "RocketMQ: Idem ≥ 0.8× raw", ratio("rocketmq", "idem", "raw").median(), ROCKETMQ_VS_RAW, true);
        }
        for (String broker : brokers()) {
            target(out, broker + ": added p99 at " + plan.steadyRate() + " msg/s ≤ 2 ms (ms)",
                    latency(broker, "idem").p99() - latency(broker, "raw").p99(), ADDED_P99_MILLIS, false);
            target(out, broker + ": ≤ 1.1 Redis commands per message",
                    spread(broker, "idem", Result::commandsPerMessage).median(), COMMANDS, false);
            target(out, broker + ": ≤ 0.01 Redis round trips per message",
                    spread(broker, "idem", Result::roundTripsPerMessage).median(), ROUND_TRIPS, false);
        }
        target(out, "≤ 120 bytes of Redis memory per done key", memory.bytesPerKey(), BYTES_PER_KEY, false);
        out.append("| With a PostgreSQL handler: Idem + ledger ≥ 0.9× the unique-index consumer, ≥ 2× it at three "
                + "copies | not measured by this harness yet | — |\n");
        return out.toString();
    }

    private List<String> brokers() {
        return List.of("kafka", "rocketmq").stream().filter(plan::runs).toList();
    }

    private static void target(StringBuilder out, String name, double measured, double limit, boolean atLeast) {
        boolean met = atLeast ? measured >= limit : measured <= limit;
        out.append(String.format(Locale.ROOT, "| %s | %.3f | %s |%n", name, measured, met ? "yes" : "**no**"));
    }
}
