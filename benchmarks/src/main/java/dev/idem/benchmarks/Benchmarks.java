package dev.idem.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.internal.Fixtures;
import dev.idem.testkit.internal.Started;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Runs every benchmark in one JVM on the test kit's real brokers and Redis, prints a markdown
 * table and writes it, with JSON, to {@code benchmarks/results/}. Arguments: {@code kafkaMessages
 * rocketMqMessages} (default 200000 100000).
 */
public final class Benchmarks {

    // DESIGN §8 and the benchmark issue's targets.
    private static final double KAFKA_VS_RAW = 0.7;
    private static final double KAFKA_VS_NAIVE = 5;
    private static final double ROUND_TRIPS = 0.05;
    private static final double ROCKETMQ_VS_RAW = 0.7;
    private static final double BYTES_PER_KEY = 160;

    private Benchmarks() {
    }

    public static void main(String[] args) throws Exception {
        // Maven hands -Dbench.args over as one argument: split it.
        String[] counts = String.join(" ", args).trim().split("\\s+");
        int kafkaMessages = counts[0].isEmpty() ? 200_000 : Integer.parseInt(counts[0]);
        int rocketMqMessages = counts.length > 1 ? Integer.parseInt(counts[1]) : 100_000;
        List<AutoCloseable> fixtures = new ArrayList<>();
        try {
            RedisEndpoint redis = (RedisEndpoint) started(fixtures, RedisEndpoint.class);
            Config config = new Config();
            config.useSingleServer().setAddress(redis.uri().toString());
            RedissonClient redisson = Redisson.create(config);
            fixtures.add(redisson::shutdown);

            List<Result> results = new ArrayList<>();
            KafkaBroker kafka = (KafkaBroker) started(fixtures, KafkaBroker.class);
            results.addAll(new KafkaBench(kafka, redisson, kafkaMessages).run());
            RocketMqBroker rocketMq = (RocketMqBroker) started(fixtures, RocketMqBroker.class);
            results.addAll(new RocketMqBench(rocketMq, redisson, rocketMqMessages).run());
            MemoryBench.Memory memory = new MemoryBench(redisson).run(10_000, 200);

            String markdown = markdown(results, memory);
            System.out.println(markdown);
            Path dir = Files.createDirectories(Path.of("results"));
            Files.writeString(dir.resolve("latest.md"), markdown);
            Files.writeString(dir.resolve("latest.json"), json(results, memory));
        } finally {
            for (int i = fixtures.size() - 1; i >= 0; i--) {
                fixtures.get(i).close();
            }
        }
        // RocketMQ leaves non-daemon threads behind.
        System.exit(0);
    }

    private static Object started(List<AutoCloseable> fixtures, Class<?> type) {
        Started started = Fixtures.start(type);
        fixtures.add(started);
        return started.value();
    }

    private static Result find(List<Result> results, String broker, String variant) {
        return results.stream().filter(r -> r.broker().equals(broker) && r.variant().equals(variant)).findFirst()
                .orElseThrow();
    }

    private static String markdown(List<Result> results, MemoryBench.Memory memory) {
        StringBuilder out = new StringBuilder("# Idem benchmarks\n\n")
                .append("Run ").append(Instant.now()).append(" on ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores, Java ").append(System.getProperty("java.version"))
                .append("; in-process brokers from the test kit, Redis on loopback.\n\n")
                .append("| broker | variant | messages | msg/s | × raw | Redis round trips/msg | Redis commands/msg "
                        + "| p50 ms | p99 ms | added p50 ms | added p99 ms |\n")
                .append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Result r : results) {
            Result raw = find(results, r.broker(), "raw");
            out.append(String.format(Locale.ROOT, "| %s | %s | %d | %.0f | %.2f | %.4f | %.3f | %.2f | %.2f | %.2f | %.2f |%n",
                    r.broker(), r.variant(), r.messages(), r.perSecond(), r.perSecond() / raw.perSecond(),
                    r.roundTripsPerMessage(), r.commandsPerMessage(), r.p50Millis(), r.p99Millis(),
                    r.p50Millis() - raw.p50Millis(), r.p99Millis() - raw.p99Millis()));
        }
        Result kafkaIdem = find(results, "kafka", "idem");
        Result kafkaRaw = find(results, "kafka", "raw");
        Result kafkaNaive = find(results, "kafka", "naive");
        Result rocketIdem = find(results, "rocketmq", "idem");
        Result rocketRaw = find(results, "rocketmq", "raw");
        out.append(String.format(Locale.ROOT, "%nRedis memory per done key: %.0f bytes (MEMORY USAGE over %d keys, "
                + "key names of %d characters).%n%n", memory.bytesPerKey(), memory.sampled(), memory.keyLength()));
        out.append("| target | measured | met |\n|---|---:|---|\n");
        target(out, "Idem on Kafka ≥ 0.7× raw", kafkaIdem.perSecond() / kafkaRaw.perSecond(), KAFKA_VS_RAW, true);
        target(out, "Idem on Kafka ≥ 5× naive", kafkaIdem.perSecond() / kafkaNaive.perSecond(), KAFKA_VS_NAIVE, true);
        target(out, "≤ 0.05 Redis round trips per message (Kafka)", kafkaIdem.roundTripsPerMessage(), ROUND_TRIPS, false);
        target(out, "Idem on RocketMQ ≥ 0.7× raw", rocketIdem.perSecond() / rocketRaw.perSecond(), ROCKETMQ_VS_RAW, true);
        target(out, "≤ 160 bytes of Redis memory per done key", memory.bytesPerKey(), BYTES_PER_KEY, false);
        return out.toString();
    }

    private static void target(StringBuilder out, String name, double measured, double limit, boolean atLeast) {
        boolean met = atLeast ? measured >= limit : measured <= limit;
        out.append(String.format(Locale.ROOT, "| %s | %.3f | %s |%n", name, measured, met ? "yes" : "**no**"));
    }

    private static String json(List<Result> results, MemoryBench.Memory memory) throws Exception {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("runAt", Instant.now().toString());
        document.put("cores", Runtime.getRuntime().availableProcessors());
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Result r : results) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("broker", r.broker());
            row.put("variant", r.variant());
            row.put("messages", r.messages());
            row.put("seconds", r.seconds());
            row.put("messagesPerSecond", r.perSecond());
            row.put("ratioToRaw", r.perSecond() / find(results, r.broker(), "raw").perSecond());
            row.put("redisRoundTripsPerMessage", r.roundTripsPerMessage());
            row.put("redisCommandsPerMessage", r.commandsPerMessage());
            row.put("p50Millis", r.p50Millis());
            row.put("p99Millis", r.p99Millis());
            rows.add(row);
        }
        document.put("results", rows);
        document.put("redisBytesPerDoneKey", memory.bytesPerKey());
        document.put("redisKeyLength", memory.keyLength());
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(document);
    }
}
