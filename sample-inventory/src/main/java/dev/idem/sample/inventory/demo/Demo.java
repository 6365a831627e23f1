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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
    // Orders are sent over about this long, so the kill lands while instances are busy.
    private static final Duration SENDING = Duration.ofSeconds(8);
    // The run has settled when every expected row is there and nothing changed for this long.
    private static final Duration QUIET = Duration.ofSeconds(3);
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration RESTART_AFTER = Duration.ofSeconds(1);
    private static final Pattern AVAILABLE = Pattern.compile("\"available\"\\s*:\\s*(-?\\d+)");
    private static final Pattern DUPLICATES = Pattern.compile("\"duplicates\"\\s*:\\s*(\\d+)");

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

            CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> send(scenario, traffic));
            long total = (long) scenario.orders().size() * Scenario.COPIES;
            long killedAt = 0;
            boolean restarted = false;
            boolean back = false;
            int kills = 0;
            long lastPrint = 0;
            long settleDeadline = 0;
            long quietSince = 0;
            Observations.Counts last = null;
            while (true) {
                TimeUnit.MILLISECONDS.sleep(250);
                long now = System.nanoTime();
                if (killedAt == 0 && traffic.sent() >= total * 2 / 5) {
                    long pid = instances.kill("B");
                    killedAt = now;
                    kills++;
                    out.printf("%5.1fs  kill -9 instance B (pid %d), mid-run: what it was doing is cut off%n",
                            seconds(t0), pid);
                }
                if (killedAt != 0 && !restarted && now - killedAt >= RESTART_AFTER.toNanos()) {
                    out.printf("%5.1fs  starting instance B again (pid %d)%n", seconds(t0), instances.start("B"));
                    restarted = true;
                }
                if (restarted && !back && instances.stats("B") != null) {
                    back = true;
                    out.printf("%5.1fs  instance B is back%n", seconds(t0));
                }
                Observations.Counts counts = observed.counts();
                if (now - lastPrint >= TimeUnit.SECONDS.toNanos(1)) {
                    lastPrint = now;
                    out.printf("%5.1fs  sent %d/%d  deducted %d (valid orders %d)  dead letters %d/%d  refunds %d/%d  lag %d%n",
                            seconds(t0), traffic.sent(), total, counts.deductions(), scenario.validOrders(),
                            counts.deadLetters(), scenario.poison().size(), counts.refunds(), scenario.poison().size(),
                            counts.lag());
                }
                if (!sending.isDone() || !back) {
                    continue;
                }
                sending.join();
                if (settleDeadline == 0) {
                    settleDeadline = now + SETTLE_TIMEOUT.toNanos();
                }
                boolean complete = counts.deductions() >= scenario.validOrders() && counts.refunds() >= scenario.poison().size()
                        && counts.deadLetters() >= scenario.poison().size() && counts.lag() == 0;
                if (!counts.equals(last)) {
                    last = counts;
                    quietSince = now;
                }
                if (complete && now - quietSince >= QUIET.toNanos()) {
                    break;
                }
                if (now > settleDeadline) {
                    out.printf("%5.1fs  not settled after %d s; judging what is there%n", seconds(t0), SETTLE_TIMEOUT.toSeconds());
                    break;
                }
            }
            long duplicates = duplicates(instances.stats("A")) + duplicates(instances.stats("B"));
            out.printf("%5.1fs  settled%n%nReport (%s, %s):%n", seconds(t0), infrastructure.database.kind(),
                    settings.guarded() ? "guards on" : "guards OFF");
            Map<String, Integer> served = new LinkedHashMap<>();
            for (String sku : scenario.seedStock().keySet()) {
                String level = instances.get("A", "/stock/" + sku);
                Matcher m = level == null ? null : AVAILABLE.matcher(level);
                served.put(sku, m != null && m.find() ? Integer.valueOf(m.group(1)) : null);
            }
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

    private static void send(Scenario scenario, Traffic traffic) {
        List<Order> orders = scenario.orders();
        long pause = SENDING.toMillis() / orders.size();
        try {
            for (int i = 0; i < orders.size(); i++) {
                Order order = orders.get(i);
                traffic.send(order, scenario.broker(order.orderId()), i);
                TimeUnit.MILLISECONDS.sleep(pause);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("sending interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException("sending failed", e);
        }
    }

    private static long duplicates(String stats) {
        if (stats == null) {
            return 0;
        }
        Matcher m = DUPLICATES.matcher(stats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
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

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }
}
