package dev.idem.kafka.kill;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The chain orders → inventory → shipping, each tier two processes of its own ({@link ChainTierMain})
 * on the ledger, the inventory's relay in its processes: every order arrives three times, spread
 * apart, while the test kills a working process with SIGKILL every second (two inventory processes,
 * then a shipping one, and so on; each just after it committed a run) and starts it again. Through the outbox, with shipping keyed on the outbox id, every order is
 * applied once by each tier (oracle: audit tables with no unique key). The same chain sending from
 * {@code onOutcome} after the commit loses shipments: a process killed between its commit and the
 * broker's acknowledgement of the send never sends again, since the ledger says done.
 */
@IdemTestKit
class OutboxChainStormIT {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxChainStormIT.class);
    private static final int ORDERS = 300;
    private static final int COPIES = 3;
    private static final Duration PRODUCE_FOR = Duration.ofSeconds(10);
    private static final Duration KILL_EVERY = Duration.ofMillis(1_000);

    @Test
    void throughTheOutboxEveryOrderShipsOnceWhateverIsKilled(KafkaBroker kafka, RedisEndpoint redis,
                                                            PostgresDatabase postgres, TestNames names)
            throws Exception {
        Chain chain = new Chain(kafka, redis, postgres, names, "inventory", "outbox-id");

        chain.runStorm(new Random(38));
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                .until(() -> chain.distinct("shipping") == ORDERS);
        chain.stopAll();

        Map<String, Integer> inventory = chain.effects("inventory");
        Map<String, Integer> shipping = chain.effects("shipping");
        assertThat(chain.kills).as("working processes killed").isGreaterThanOrEqualTo(3);
        LOG.info("through the outbox: {} working processes killed", chain.kills);
        assertThat(inventory).as("inventory effects per order").hasSize(ORDERS).containsOnlyKeys(chain.orders)
                .allSatisfy((order, n) -> assertThat(n).as(order).isEqualTo(1));
        assertThat(shipping).as("shipping effects per order").hasSize(ORDERS)
                .allSatisfy((order, n) -> assertThat(n).as(order).isEqualTo(1));
        assertThat(chain.outbox.status().backlog()).isZero();
    }

    @Test
    void sentFromOnOutcomeTheChainLosesShipmentsWhenTheSenderIsKilled(KafkaBroker kafka, RedisEndpoint redis,
                                                                     PostgresDatabase postgres, TestNames names)
            throws Exception {
        Chain chain = new Chain(kafka, redis, postgres, names, "inventory-on-outcome", "order");

        chain.runStorm(new Random(38));
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                .until(() -> chain.distinct("inventory") == ORDERS);
        // Whatever was sent arrives within seconds: wait until shipping stops moving.
        long[] last = {-1};
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(2)).until(() -> {
            long now = chain.distinct("shipping");
            boolean still = now == last[0];
            last[0] = now;
            return still;
        });
        chain.stopAll();

        Map<String, Integer> inventory = chain.effects("inventory");
        Map<String, Integer> shipping = chain.effects("shipping");
        assertThat(inventory).as("inventory effects per order").hasSize(ORDERS)
                .allSatisfy((order, n) -> assertThat(n).as(order).isEqualTo(1));
        LOG.info("sent from onOutcome: {} of {} orders never shipped after {} kills", ORDERS - shipping.size(),
                ORDERS, chain.kills);
        assertThat(chain.kills).as("working processes killed").isGreaterThanOrEqualTo(1);
        assertThat(shipping.size()).as("orders shipped, of " + ORDERS + " applied by the inventory")
                .isLessThan(ORDERS);
    }

    /** The two tiers' processes, their tables, and the storm. */
    private static final class Chain {
        final KafkaBroker kafka;
        final List<String> orders = new ArrayList<>();
        final JdbcOutbox outbox;
        final PostgresDatabase postgres;
        final String ordersTopic;
        final String reserved;
        final String suffix;
        final Map<String, List<String>> arguments = new HashMap<>();
        final Map<String, Process> processes = new HashMap<>();
        final Path logs;
        // Per process name, the kill count its current process's log is named after.
        final Map<String, Integer> started = new HashMap<>();
        int kills;
        int ticks;

        Chain(KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names, String inventoryRole,
              String shippingKeys) throws Exception {
            this.kafka = kafka;
            this.postgres = postgres;
            this.ordersTopic = names.topic();
            this.reserved = ordersTopic + "-reserved";
            this.suffix = Integer.toHexString(names.group().hashCode());
            kafka.createTopic(ordersTopic, 4);
            kafka.createTopic(reserved, 4);
            DataSource dataSource = LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(), postgres.password());
            try (Connection connection = postgres.connect()) {
                LedgerFixture.createTables(connection, "postgresql");
                for (String tier : List.of("inventory", "shipping")) {
                    connection.createStatement().execute("create table " + audit(tier)
                            + " (order_id varchar(255) not null)");   // no unique key: every effect counts
                }
            }
            outbox = JdbcOutbox.builder(dataSource).table("chain_outbox_" + suffix).createTable(true).build();
            for (int i = 0; i < ORDERS; i++) {
                orders.add(ordersTopic + ":" + i);
            }
            logs = Files.createDirectories(Path.of("target", "chain-logs", ordersTopic));
            for (int instance = 0; instance < 2; instance++) {
                arguments.put("inventory-" + instance, args(inventoryRole, instance, kafka, names.group("inventory"),
                        ordersTopic, reserved, redis, names.keyPrefix() + "inv", postgres, audit("inventory"),
                        shippingKeys));
                arguments.put("shipping-" + instance, args("shipping", instance, kafka, names.group("shipping"),
                        reserved, "-", redis, names.keyPrefix() + "ship", postgres, audit("shipping"), shippingKeys));
            }
        }

        private List<String> args(String role, int instance, KafkaBroker kafka, String group, String in, String out,
                                  RedisEndpoint redis, String keyPrefix, PostgresDatabase postgres, String audit,
                                  String shippingKeys) {
            // Quick to start again (C1 only, serial GC): more kills land on working processes.
            return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-cp", System.getProperty("java.class.path"), ChainTierMain.class.getName(),
                    role, String.valueOf(instance), kafka.bootstrapServers(), group, in, out, redis.uri().toString(),
                    keyPrefix, postgres.jdbcUrl(), postgres.user(), postgres.password(), "chain_outbox_" + suffix,
                    audit, shippingKeys);
        }

        String audit(String tier) {
            return "chain_" + tier + "_" + suffix;
        }

        /** Starts every process, sends the storm while killing one process at a time, and lets the last restart. */
        void runStorm(Random random) throws Exception {
            for (String name : arguments.keySet()) {
                start(name);
            }
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
                for (String name : arguments.keySet()) {
                    if (!Files.readString(logs.resolve(name + "-0.log")).contains("started ")) {
                        return false;
                    }
                }
                return true;
            });
            List<String> copies = new ArrayList<>();
            for (int copy = 0; copy < COPIES; copy++) {
                copies.addAll(orders);
            }
            Collections.shuffle(copies, random);
            long start = System.nanoTime();
            long nextKill = start + KILL_EVERY.toNanos();
            int sent = 0;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                    new StringSerializer(), new StringSerializer())) {
                while (sent < copies.size()) {
                    long due = (long) ((double) (System.nanoTime() - start) / PRODUCE_FOR.toNanos() * copies.size());
                    for (; sent < Math.min(due, copies.size()); sent++) {
                        producer.send(new ProducerRecord<>(ordersTopic, copies.get(sent), copies.get(sent)));
                    }
                    producer.flush();
                    if (System.nanoTime() >= nextKill) {
                        // Two kills of the sending tier to one of the receiving tier, each of a process
                        // that is up and working (a process still starting would die with nothing to lose).
                        String tier = ticks++ % 3 < 2 ? "inventory-" : "shipping-";
                        List<String> working = new ArrayList<>();
                        for (int instance = 0; instance < 2; instance++) {
                            if (lines(log(tier + instance), "") > 0) {
                                working.add(tier + instance);
                            }
                        }
                        if (!working.isEmpty()) {
                            String victim = working.get(random.nextInt(working.size()));
                            awaitWork(victim);
                            processes.get(victim).destroyForcibly().waitFor(10, TimeUnit.SECONDS);   // SIGKILL
                            kills++;
                            start(victim);
                        }
                        nextKill += KILL_EVERY.toNanos();
                    }
                    TimeUnit.MILLISECONDS.sleep(20);
                }
            }
        }

        /**
         * Waits (up to 2 s) until the process has just committed a run, so that the kill lands while
         * it works: its sends in flight, its relay's pass, its next run's transaction. A process that
         * has an outcome is working; one that is still starting is not killed.
         */
        private void awaitWork(String name) throws IOException, InterruptedException {
            Path log = log(name);
            long before = lines(log, "applied ");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (lines(log, "applied ") == before && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(2);
            }
        }

        private Path log(String name) {
            return logs.resolve(name + "-" + started.get(name) + ".log");
        }

        /** Outcome lines ({@code applied <key>}, {@code outcome <key>}) of the log starting with {@code prefix}. */
        private static long lines(Path log, String prefix) throws IOException {
            try (java.util.stream.Stream<String> lines = Files.lines(log)) {
                return lines.filter(line -> line.startsWith(prefix)
                        && (line.startsWith("applied ") || line.startsWith("outcome "))).count();
            }
        }

        private void start(String name) throws IOException {
            started.put(name, kills);
            Path log = logs.resolve(name + "-" + kills + ".log");
            processes.put(name, new ProcessBuilder(arguments.get(name)).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start());
        }

        void stopAll() throws InterruptedException {
            for (Process process : processes.values()) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }

        long distinct(String tier) throws Exception {
            try (Connection connection = postgres.connect(); ResultSet rows = connection.createStatement()
                    .executeQuery("select count(distinct order_id) from " + audit(tier))) {
                rows.next();
                return rows.getLong(1);
            }
        }

        Map<String, Integer> effects(String tier) throws Exception {
            Map<String, Integer> effects = new HashMap<>();
            try (Connection connection = postgres.connect(); ResultSet rows = connection.createStatement()
                    .executeQuery("select order_id, count(*) from " + audit(tier) + " group by order_id")) {
                while (rows.next()) {
                    effects.put(rows.getString(1), rows.getInt(2));
                }
            }
            return effects;
        }
    }
}
