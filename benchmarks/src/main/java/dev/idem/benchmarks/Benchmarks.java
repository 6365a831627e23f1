package dev.idem.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.internal.Fixtures;
import dev.idem.testkit.internal.PostgresProbe;
import dev.idem.testkit.internal.Started;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs every benchmark in one JVM on the test kit's real brokers, Redis and PostgreSQL, prints a markdown
 * report and writes it, with JSON, to {@code benchmarks/results/} ({@code latest.*}, or
 * {@code partial.*} for {@code --quick} or {@code --only}). See {@link Plan} for rounds and limits.
 */
public final class Benchmarks {

    private static final Logger LOG = LoggerFactory.getLogger(Benchmarks.class);

    /** The delay {@link DelayProxy} adds each way in the remote runs: a round trip of 0.5 ms. */
    static final Duration REMOTE_ONE_WAY = Duration.ofNanos(250_000);

    private Benchmarks() {
    }

    public static void main(String[] args) throws Exception {
        // Maven hands -Dbench.args over as one argument.
        Plan plan = Plan.of(args);
        List<AutoCloseable> fixtures = new ArrayList<>();
        int status = 0;
        try {
            RedisEndpoint redis = (RedisEndpoint) started(fixtures, RedisEndpoint.class);
            Config config = new Config();
            config.useSingleServer().setAddress(redis.uri().toString());
            RedissonClient redisson = Redisson.create(config);
            fixtures.add(redisson::shutdown);

            List<Result> results = new ArrayList<>();
            List<Latency> latencies = new ArrayList<>();
            List<Calibration.Reading> phases = new ArrayList<>();
            KafkaBroker kafka = plan.runs("kafka") || plan.runs("share") || plan.runs("pg") || plan.runs("remote")
                    || plan.runs("outbox") || plan.runs("speeds")
                    ? (KafkaBroker) started(fixtures, KafkaBroker.class) : null;
            RocketMqBroker rocketMq = plan.runs("rocketmq")
                    ? (RocketMqBroker) started(fixtures, RocketMqBroker.class) : null;
            for (int pass = 1; pass <= plan.passes(); pass++) {
                phases.add(phase("pass " + pass + " start"));
                results.addAll(pass(pass, plan, fixtures, redis, redisson, kafka, rocketMq, latencies));
                phases.add(phase("pass " + pass + " end"));
            }
            OutboxBench.Figures outbox = null;
            if (plan.runs("outbox")) {
                PostgresProbe probe = Fixtures.postgres();
                PostgresDatabase postgres = probe.database().orElseThrow(() -> new IllegalStateException(
                        "the outbox needs a database: " + probe.reason()));
                outbox = new OutboxBench(kafka, postgres, plan).run();
            }
            CoreCostBench.Figures core = plan.runs("core") ? new CoreCostBench(redisson, plan).run() : null;
            MemoryBench.Memory memory = new MemoryBench(redisson).run(10_000, 200);
            MemoryBench.Scale scale = new MemoryBench(redisson).atScale(plan.quick() ? 100_000 : 1_000_000);

            Report report = new Report(plan, results, latencies, memory, scale, phases);
            String markdown = report.markdown() + (outbox == null ? "" : OutboxBench.markdown(outbox))
                    + (core == null ? "" : CoreCostBench.markdown(core));
            System.out.println(markdown);
            Path dir = Files.createDirectories(Path.of("results"));
            String name = plan.quick() || plan.only() != null ? "partial" : "latest";
            Files.writeString(dir.resolve(name + ".md"), markdown);
            Files.writeString(dir.resolve(name + ".json"), json(plan, results, latencies, memory, scale, outbox, phases));
            if (!report.stockRight()) {
                System.err.println("FAIL: the stock of the unique-index consumer or of Idem + ledger is wrong "
                        + "(see the report)");
                status = 1;
            }
        } catch (Exception | Error e) {
            // Exit below, failed: a throw out of main would leave the brokers' threads holding the JVM.
            LOG.error("the benchmark run failed", e);
            status = 2;
        } finally {
            for (int i = fixtures.size() - 1; i >= 0; i--) {
                fixtures.get(i).close();
            }
        }
        // RocketMQ leaves non-daemon threads behind.
        System.exit(status);
    }

    /**
     * One pass over the throughput parts, its results tagged with {@code pass}; the latency runs in
     * the first pass only.
     */
    private static List<Result> pass(int pass, Plan plan, List<AutoCloseable> fixtures, RedisEndpoint redis,
                                     RedissonClient redisson, KafkaBroker kafka, RocketMqBroker rocketMq,
                                     List<Latency> latencies) throws Exception {
        List<Result> results = new ArrayList<>();
        if (plan.runs("kafka")) {
            KafkaBench kafkaBench = new KafkaBench(kafka, redisson, plan, redis.uri());
            results.addAll(kafkaBench.throughput());
            if (pass == 1) {
                latencies.addAll(kafkaBench.latency());
            }
        }
        if (plan.runs("speeds")) {
            results.addAll(new HandlerSpeeds(kafka, redisson, plan).run());
        }
        if (plan.runs("remote")) {
            // Redis 0.25 ms away each way, as across a network: the same Kafka rounds.
            DelayProxy proxy = new DelayProxy(redis.uri(), REMOTE_ONE_WAY);
            fixtures.add(proxy);
            Config remote = new Config();
            remote.useSingleServer().setAddress(proxy.uri().toString());
            RedissonClient remoteRedisson = Redisson.create(remote);
            fixtures.add(remoteRedisson::shutdown);
            results.addAll(new KafkaBench(kafka, remoteRedisson, plan, null).remoteThroughput());
        }
        if (plan.runs("share")) {
            results.addAll(new ShareBench(kafka, redisson, plan).throughput());
        }
        if (plan.runs("rocketmq")) {
            RocketMqBench rocketMqBench = new RocketMqBench(rocketMq, redisson, plan);
            results.addAll(rocketMqBench.throughput());
            if (pass == 1) {
                latencies.addAll(rocketMqBench.latency());
            }
        }
        if (plan.runs("pg")) {
            PostgresProbe probe = Fixtures.postgres();
            PostgresDatabase postgres = probe.database().orElseThrow(() -> new IllegalStateException(
                    "the PostgreSQL table needs a database: " + probe.reason()));
            results.addAll(new PgBench(kafka, redisson, postgres, plan).throughput());
        }
        return results.stream().map(r -> r.inPass(pass)).toList();
    }

    private static Calibration.Reading phase(String when) {
        Calibration.Reading reading = Calibration.take(when);
        LOG.info("calibration {}", reading.describe());
        return reading;
    }

    private static Object started(List<AutoCloseable> fixtures, Class<?> type) {
        Started started = Fixtures.start(type);
        fixtures.add(started);
        return started.value();
    }

    private static String json(Plan plan, List<Result> results, List<Latency> latencies, MemoryBench.Memory memory,
                               MemoryBench.Scale scale, OutboxBench.Figures outbox,
                               List<Calibration.Reading> phases) throws Exception {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("runAt", Instant.now().toString());
        document.put("cores", Runtime.getRuntime().availableProcessors());
        document.put("plan", Map.of("quick", plan.quick(), "kafkaMessages", plan.kafkaMessages(),
                "rocketMqMessages", plan.rocketMqMessages(), "shareMessages", plan.shareMessages(),
                "pgOrders", plan.pgOrders(),
                "limitSeconds", plan.limit().toSeconds(), "rounds", plan.rounds(),
                "steadySeconds", plan.steady().toSeconds(), "steadyRate", plan.steadyRate(), "passes", plan.passes()));
        document.put("calibration", phases.stream().map(p -> Map.of("when", p.when(), "sortMillis", p.millis(),
                "memoryMillis", p.memoryMillis(), "loopbackMillis", Double.isNaN(p.loopbackMillis()) ? -1 : p.loopbackMillis(),
                "slowdown", p.slowdown(), "phase", p.phase(),
                "stealPercent", Double.isNaN(p.stealPercent()) ? -1 : p.stealPercent())).toList());
        document.put("throughput", results.stream().map(r -> {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("broker", r.broker());
            row.put("variant", r.variant());
            row.put("pass", r.pass());
            row.put("round", r.round());
            row.put("messages", r.messages());
            row.put("seconds", r.seconds());
            row.put("messagesPerSecond", r.perSecond());
            row.put("redisRoundTripsPerMessage", r.roundTripsPerMessage());
            row.put("redisCommandsPerMessage", r.commandsPerMessage());
            row.put("jvmCpuMicrosPerMessage", r.jvmCpuMicros());
            row.put("redisCpuMicrosPerMessage", r.redisCpuMicros());
            if (r.database() != null) {
                row.put("dbTransactionsPerMessage", r.database().transactionsPerMessage());
                row.put("stock", r.database().stock());
                row.put("expectedStock", r.database().expectedStock());
                row.put("wrongSkus", r.database().wrongSkus());
            }
            return row;
        }).toList());
        document.put("latency", latencies);
        document.put("redisBytesPerDoneKey", memory.bytesPerKey());
        document.put("redisKeyLength", memory.keyLength());
        document.put("redisUsedBytesPerDoneKey", scale.usedBytesPerKey());
        document.put("redisUsedBytesKeys", scale.keys());
        if (outbox != null) {
            document.put("outbox", outbox);
        }
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValueAsString(document);
    }
}
