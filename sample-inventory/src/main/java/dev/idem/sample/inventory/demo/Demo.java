package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Guards;
import dev.idem.sample.inventory.Order;
import dev.idem.sample.inventory.Stock;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The demo: {@code ./mvnw -B -q -pl sample-inventory -am verify -Pdemo -DskipTests}. Runs the
 * inventory service's two instances on real brokers, Redis and a database, sends every order three
 * times with poison orders and transient failures, kills one instance mid-run and starts it again,
 * then prints the report and exits 0 on PASS, 1 on FAIL (2 when it could not run). System
 * properties: {@code demo.dir}, {@code demo.guards} ({@code on}, or {@code off}: the same scenario
 * on a naive consumer, which must FAIL), {@code demo.orders}, {@code demo.seed},
 * {@code demo.rocketmq}, {@code demo.keep} (keep the database schema and Redis keys).
 */
public final class Demo {

    static final int PARTITIONS = 4;
    private static final Pattern AVAILABLE = Pattern.compile("\"available\"\\s*:\\s*(-?\\d+)");
    private static final Pattern DUPLICATES = Pattern.compile("\"duplicates\"\\s*:\\s*(\\d+)");
    private static final Pattern APPLIED = Pattern.compile("\"applied\"\\s*:\\s*(\\d+)");
    private static final Pattern COMPENSATIONS = Pattern.compile("\"compensations\"\\s*:\\s*(\\d+)");

    private Demo() {
    }

    /**
     * The demo's settings.
     *
     * @param dir      logs of the instances, broker data
     * @param guarded  Idem on (false: the naive consumer)
     * @param orders   valid orders (a few poison ones are added)
     * @param seed     the scenario's random seed
     * @param rocketMq every third order through RocketMQ (guarded runs only)
     * @param operator end with the idem command line and a replay
     * @param keep     keep the database schema and Redis keys after the run
     */
    record Settings(Path dir, boolean guarded, int orders, long seed, boolean rocketMq, boolean operator, boolean keep) {

        static Settings fromSystemProperties() {
            boolean guarded = !Guards.OFF.equals(System.getProperty("demo.guards", "on").trim());
            return new Settings(Path.of(System.getProperty("demo.dir", "target/demo")).toAbsolutePath(), guarded,
                    Integer.getInteger("demo.orders", 150), Long.getLong("demo.seed", 15),
                    guarded && Boolean.parseBoolean(System.getProperty("demo.rocketmq", "true")), guarded,
                    Boolean.getBoolean("demo.keep"));
        }
    }

    /** What a run found. */
    record Result(Report report, boolean replayed, Duration took) {

        boolean pass() {
            return report.pass() && replayed;
        }
    }

    public static void main(String[] args) {
        int code;
        PrintStream out = System.out;
        PrintStream err = System.err;
        try {
            Settings settings = Settings.fromSystemProperties();
            Files.createDirectories(settings.dir());
            // What the in-process brokers print on the console themselves (Kafka's storage
            // formatter, RocketMQ's own logger, Netty at shutdown) goes to a file; the demo prints
            // its progress and report on the streams it kept.
            PrintStream libraries = new PrintStream(new FileOutputStream(settings.dir().resolve("console.log").toFile()),
                    true, StandardCharsets.UTF_8);
            System.setOut(libraries);
            System.setErr(libraries);
            out.println("Idem demo: an inventory service deducting stock exactly once"
                    + (settings.guarded() ? "" : " -- GUARDS OFF (a naive consumer: this run must FAIL)"));
            out.println("Infrastructure (configured services, else in-process ones):");
            try (Infrastructure infrastructure = Infrastructure.start(settings.dir(), settings.rocketMq(), out)) {
                Names names = Names.of(infrastructure.externalKafka ? Long.toString(System.currentTimeMillis(), 36) : "");
                Result result = run(settings, infrastructure, names, out);
                code = result.pass() ? 0 : 1;
            }
        } catch (Exception e) {
            err.println("the demo could not run: " + e);
            e.printStackTrace(err);
            code = 2;
        }
        out.flush();
        // Brokers' and clients' non-daemon threads would keep the JVM alive.
        Runtime.getRuntime().halt(code);
    }

    /** One run of the scenario on {@code infrastructure} under {@code names}; prints as it goes. */
    static Result run(Settings settings, Infrastructure infrastructure, Names names, PrintStream out) throws Exception {
        long t0 = System.nanoTime();
        Scenario scenario = Scenario.generate(settings.seed(), settings.orders(), settings.rocketMq());
        Infrastructure.Database database = infrastructure.database.inSchema(names.schema());
        infrastructure.freshSchema(names.schema());
        try (Connection c = database.connect()) {
            Stock.createTables(c, settings.guarded());
            for (Map.Entry<String, Integer> sku : scenario.seedStock().entrySet()) {
                Stock.put(c, sku.getKey(), sku.getValue());
            }
        }
        infrastructure.createTopics(names, PARTITIONS);
        out.printf("Seeded %d SKUs with %d each; %d orders to send, %d copies each.%n", scenario.seedStock().size(),
                scenario.seedStock().values().iterator().next(), scenario.orders().size(), Scenario.COPIES);

        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("datasources.default.url", database.jdbcUrl());
        properties.put("datasources.default.username", database.user());
        properties.put("datasources.default.password", database.password());
        properties.put("idem.redis.address", infrastructure.redis.toString());
        properties.put("idem.redis.key-prefix", names.keyPrefix());
        properties.put("idem.kafka.bootstrap.servers", infrastructure.kafka);
        if (settings.rocketMq()) {
            properties.put("idem.rocketmq.name-server", infrastructure.rocketMq);
        }
        properties.put("inventory.topic", names.topic());
        properties.put("inventory.refund-topic", names.refundTopic());
        properties.put("inventory.group", names.group());
        properties.put(Guards.PROPERTY, settings.guarded() ? "on" : Guards.OFF);
        properties.put("inventory.faults.transient-percent", Integer.toString(Scenario.TRANSIENT_PERCENT));

        Report report;
        boolean replayed = !settings.operator();
        try (Instances instances = new Instances(settings.dir(), properties);
             Observations observed = new Observations(infrastructure, database, names);
             Traffic traffic = new Traffic(infrastructure, names, PARTITIONS)) {
            instances.start("A");
            instances.start("B");
            instances.awaitReady("A");
            instances.awaitReady("B");
            out.printf("%5.1fs  instances A (pid %d) and B (pid %d) consume %s as %s%s%n", seconds(t0), instances.pid("A"),
                    instances.pid("B"), names.topic(), names.group(), settings.guarded() ? " through Idem" : " WITHOUT Idem");

            int kills = new Run(scenario, instances, traffic, observed, t0, out).play();
            long duplicates = duplicates(instances.stats("A")) + duplicates(instances.stats("B"));
            out.printf("%nReport (%s, %s):%n", infrastructure.database.kind(),
                    settings.guarded() ? "guards on" : "guards OFF");
            Map<String, Integer> stock = new LinkedHashMap<>();
            for (String sku : scenario.seedStock().keySet()) {
                stock.put(sku, number(instances.get("A", "/stock/" + sku), AVAILABLE));
            }
            String stats = instances.stats("A");
            Report.Served served = new Report.Served(stock, number(stats, APPLIED), number(stats, COMPENSATIONS));
            report = Report.judge(scenario, observed, names, traffic.sent(), duplicates, instances.starts(), kills, served);
            report.print(out);

            if (settings.operator()) {
                out.println();
                out.println("The operator's view: the dead letters with the idem command line, and a replay.");
                String replay = scenario.orders().stream().map(Order::orderId).filter(scenario::isPoison)
                        .filter(id -> scenario.broker(id).equals("kafka")).sorted().findFirst().orElseThrow();
                replayed = new Operator(infrastructure, database, names, settings.dir(), out).replay(names, replay, observed);
            }
        } finally {
            if (!settings.keep()) {
                forget(infrastructure, names);
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        Result result = new Result(report, replayed, took);
        out.printf("%n%s in %.1f s%s%n", result.pass() ? "PASS" : "FAIL", took.toMillis() / 1000.0,
                settings.guarded() ? "" : " (guards off: FAIL is the expected verdict; it shows the checks can fail)");
        return result;
    }

    private static long duplicates(String stats) {
        Integer duplicates = number(stats, DUPLICATES);
        return duplicates == null ? 0 : duplicates;
    }

    /** The number a pattern's group finds in a JSON answer, or null. */
    private static Integer number(String json, Pattern pattern) {
        if (json == null) {
            return null;
        }
        Matcher m = pattern.matcher(json);
        return m.find() ? Integer.valueOf(m.group(1)) : null;
    }

    /** Deletes the run's Redis keys and drops its schema: the demo leaves nothing behind. */
    private static void forget(Infrastructure infrastructure, Names names) {
        Config config = new Config();
        config.useSingleServer().setAddress(infrastructure.redis.toString());
        RedissonClient redisson = Redisson.create(config);
        try {
            redisson.getKeys().deleteByPattern(names.keyPrefix() + "*");
        } finally {
            redisson.shutdown();
        }
        try {
            infrastructure.dropSchema(names.schema());
        } catch (java.sql.SQLException e) {
            org.slf4j.LoggerFactory.getLogger(Demo.class).warn("dropping schema {} failed", names.schema(), e);
        }
    }

    static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }
}
