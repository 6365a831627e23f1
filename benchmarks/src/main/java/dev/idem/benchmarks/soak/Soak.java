package dev.idem.benchmarks.soak;

import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.internal.Fixtures;
import dev.idem.testkit.internal.Started;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The soak (issue 9): three consumer processes of one group, in guarded mode, under continuous
 * duplicated traffic with poison and transient messages, while consumers are killed (SIGKILL),
 * paused beyond their lease (SIGSTOP) and Redis suffers its topology's fault ({@link SoakRedis}:
 * killed and started again empty, a Sentinel failover that loses writes, a live cluster reshard). Then it lets
 * the consumers drain and checks every id: 0 lost, 0 doubled, every poison id dead-lettered and
 * compensated exactly once. It prints a report, writes it to {@code results/soak-<broker>.md}
 * ({@code soak-<broker>-redis-only.md} in Redis-only mode), and exits with 1 when a promise is broken. Settings: {@link SoakSettings}. Run with {@code -Psoak}.
 */
public final class Soak {

    // The consumers have finished when nothing new has been handled for this long: longer than the
    // longest backoff (1.6 s) plus a lease.
    private static final Duration QUIET = Duration.ofSeconds(10);
    private static final Duration POLL = Duration.ofSeconds(2);
    // After the consumers join, before traffic starts: Kafka and RocketMQ spread partitions over them.
    private static final Duration SETTLE = Duration.ofSeconds(5);
    // How many violating ids the report tells the whole story of.
    private static final int HISTORIES = 10;

    private Soak() {
    }

    public static void main(String[] args) throws Exception {
        SoakSettings settings = SoakSettings.fromSystemProperties();
        String run = Long.toString(System.currentTimeMillis(), 36);
        Path dir = Files.createDirectories(Path.of("target", "soak", settings.broker() + "-" + run).toAbsolutePath());
        // Whatever ends this JVM (Ctrl-C included) ends its redis-server and consumer processes too.
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
                ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly)));
        Timeline timeline = new Timeline();
        timeline.event("soak %s on %s, %s mode, Redis %s, seed %d, %d s of traffic and faults, %.0f ids/s; logs in %s",
                run, settings.broker(), settings.guarded() ? "guarded" : "Redis-only", settings.redis(), settings.seed(),
                settings.duration().toSeconds(), settings.idsPerSecond(), Path.of("").toAbsolutePath().relativize(dir));
        PostgresDatabase database = Fixtures.postgres().database()
                .orElseThrow(() -> new IllegalStateException("the soak needs PostgreSQL: " + Fixtures.postgres().reason()));
        List<AutoCloseable> resources = new ArrayList<>();
        int exit;
        try {
            exit = run(settings, run, dir, database, timeline, resources);
        } finally {
            for (int i = resources.size() - 1; i >= 0; i--) {
                try {
                    resources.get(i).close();
                } catch (Exception e) {
                    timeline.event("closing %s failed: %s", resources.get(i), e);
                }
            }
        }
        // The brokers leave non-daemon threads behind.
        System.exit(exit);
    }

    private static int run(SoakSettings settings, String run, Path dir, PostgresDatabase database, Timeline timeline,
                           List<AutoCloseable> resources) throws Exception {
        String topic = "soak-" + run;
        String group = "soak-" + run;
        Tables tables = new Tables("soak_" + run);
        ThreadConnections connections = new ThreadConnections(database.jdbcUrl(), database.user(), database.password(), null);
        Connection connection = connections.connection();
        resources.add(connection);
        tables.create(connection);
        JdbcEffectLedger.builder(connections.dataSource()).table(tables.ledger()).createTable(true).build();

        SoakBroker broker = broker(settings, run, resources);
        broker.create(topic, settings.partitions(), group);
        String keyPrefix = "soak-" + run + ":";
        AtomicReference<Traffic> sending = new AtomicReference<>();
        SoakRedis redis = redis(settings, dir, keyPrefix, group, topic,
                () -> sending.get() == null ? Set.of() : sending.get().sent().keySet());
        resources.add(redis);
        ConsumerSpec spec = new ConsumerSpec(settings.broker(), broker.address(), topic, group, redis.url(),
                keyPrefix, database.jdbcUrl(), database.user(), database.password(), tables.prefix(),
                settings.lease(), settings.concurrency(), dir, settings.guarded());
        ConsumerProcesses consumers = new ConsumerProcesses(spec, settings.consumers());
        resources.add(consumers);
        for (int slot = 0; slot < consumers.size(); slot++) {
            consumers.start(slot);
        }
        for (int slot = 0; slot < consumers.size(); slot++) {
            consumers.awaitReady(slot);
        }
        TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis());
        timeline.event("%d consumers ready; traffic and faults start", consumers.size());

        Random random = new Random(settings.seed());
        Traffic traffic = new Traffic(broker, topic, settings.partitions(), settings.idsPerSecond(), random);
        sending.set(traffic);
        Chaos chaos = new Chaos(consumers, redis, new Random(random.nextLong()), settings.lease(), timeline);
        long trafficStarted = System.nanoTime();
        traffic.start();
        chaos.run(settings.duration());
        traffic.stop();
        double trafficSeconds = (System.nanoTime() - trafficStarted) / 1e9;
        Map<String, Integer> sent = traffic.sent();
        timeline.event("traffic and faults over: %d ids sent; draining", sent.size());

        long drainStarted = System.nanoTime();
        boolean drained = drain(connection, tables, broker, topic, group, sent, settings.drain(), timeline);
        double drainSeconds = (System.nanoTime() - drainStarted) / 1e9;
        List<Integer> dead = consumers.dead();
        Tally tally = Tally.read(connection, tables, broker, topic, group, dir);
        List<String> repeated = tally.effects().entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey)
                .toList();
        List<String> compensatedAgain = tally.compensations().entrySet().stream().filter(e -> e.getValue() > 1)
                .map(Map.Entry::getKey).toList();
        Verdict verdict = new Verdict(sent, tally, settings.guarded(), redis.losses(), chaos.stops(),
                Tally.rows(connection, tables.effects(), repeated),
                Tally.rows(connection, tables.compensations(), compensatedAgain));
        boolean kept = verdict.kept() && dead.isEmpty() && drained;
        Map<String, List<String>> histories = new LinkedHashMap<>();
        for (String id : verdict.violating().stream().limit(HISTORIES).toList()) {
            histories.put(id, Tally.history(connection, tables, id));
        }
        String report = new SoakReport(settings, run, dir, timeline).markdown(new SoakReport.Figures(sent, tally,
                verdict, trafficSeconds, drainSeconds, drained, traffic.failures(), consumers.started(), dead,
                chaos.kills(), chaos.pauses(), chaos.pauseRange(), chaos.redisFaults(), redis.faultName(),
                redis.losses().size(), histories), kept);
        System.out.println(report);
        Files.writeString(dir.resolve("summary.md"), report);
        Path results = Files.createDirectories(Path.of("results"));
        Files.writeString(results.resolve("soak-" + settings.broker()
                + (settings.redis().equals("single") ? "" : "-" + settings.redis())
                + (settings.guarded() ? "" : "-redis-only") + ".md"), report);
        if (kept) {
            tables.drop(connection);
        } else {
            timeline.event("promises broken: tables %s_* kept for analysis", tables.prefix());
        }
        return kept ? 0 : 1;
    }

    /** The soak's Redis in the topology the settings name, started. */
    private static SoakRedis redis(SoakSettings settings, Path dir, String keyPrefix, String group, String topic,
                                   Supplier<Set<String>> sentIds) throws Exception {
        return switch (settings.redis()) {
            case "sentinel" -> new SentinelRedis(dir.resolve("redis-sentinel"), keyPrefix, group, topic, sentIds);
            case "cluster" -> new ClusterRedis(dir.resolve("redis-cluster"));
            default -> {
                OwnRedis own = new OwnRedis(dir);
                own.up();
                yield own;
            }
        };
    }

    private static SoakBroker broker(SoakSettings settings, String run, List<AutoCloseable> resources) throws Exception {
        Started fixture = Fixtures.start(settings.broker().equals("rocketmq") ? RocketMqBroker.class : KafkaBroker.class);
        resources.add(fixture);
        SoakBroker broker = fixture.value() instanceof KafkaBroker kafka
                ? new KafkaSoakBroker(kafka, settings.broker().equals("share"))
                : new RocketMqSoakBroker((RocketMqBroker) fixture.value(), run);
        resources.add(broker);
        return broker;
    }

    /**
     * Waits until every id that applies has an effect, every poison id a compensation, nothing is left
     * unacknowledged, and no handler has run for {@link #QUIET}; false if {@code limit} passes first.
     */
    private static boolean drain(Connection connection, Tables tables, SoakBroker broker, String topic, String group,
                                 Map<String, Integer> sent, Duration limit, Timeline timeline) throws Exception {
        long applying = sent.keySet().stream().filter(id -> Kind.of(id).applies()).count();
        long poison = sent.size() - applying;
        long deadline = System.nanoTime() + limit.toNanos();
        long lastCalls = -1;
        long quietSince = System.nanoTime();
        long lastReport = 0;
        while (true) {
            long applied = Tally.distinctIds(connection, tables.effects());
            long compensated = Tally.distinctIds(connection, tables.compensations());
            long calls = Tally.rows(connection, tables.calls());
            long lag = broker.lag(group, topic);
            long now = System.nanoTime();
            if (calls != lastCalls) {
                lastCalls = calls;
                quietSince = now;
            }
            boolean settled = applied >= applying && compensated >= poison && lag == 0;
            if (settled && now - quietSince >= QUIET.toNanos()) {
                timeline.event("drained: %d of %d ids applied, %d of %d poison ids compensated, lag 0, no handler "
                        + "call for %d s", applied, applying, compensated, poison, QUIET.toSeconds());
                return true;
            }
            if (now > deadline) {
                timeline.event("NOT drained after %d s: %d of %d ids applied, %d of %d poison ids compensated, lag %d",
                        limit.toSeconds(), applied, applying, compensated, poison, lag);
                return false;
            }
            if (now - lastReport > TimeUnit.SECONDS.toNanos(10)) {
                lastReport = now;
                timeline.event("draining: %d of %d ids applied, %d of %d poison ids compensated, lag %d, %d handler calls",
                        applied, applying, compensated, poison, lag, calls);
            }
            TimeUnit.MILLISECONDS.sleep(POLL.toMillis());
        }
    }
}
