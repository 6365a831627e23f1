package dev.idem.sample.inventory.demo;

import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.internal.Fixtures;
import dev.idem.testkit.internal.PostgresProbe;
import dev.idem.testkit.internal.Started;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.h2.tools.Server;

/**
 * What the demo runs on: the configured services, else the test kit's in-process Kafka and
 * RocketMQ, Redis on 127.0.0.1:6379 (else an embedded redis-server), PostgreSQL when one answers
 * (else H2, served over TCP so the service's processes share it). Configured with the environment:
 * {@code KAFKA_BOOTSTRAP}, {@code ROCKETMQ_NAMESRV}, {@code REDIS_URL}, {@code JDBC_URL} (+
 * {@code JDBC_USER}, {@code JDBC_PASSWORD}). Closing stops what it started.
 */
final class Infrastructure implements AutoCloseable {

    /** A database the demo and the service's processes reach; {@code kind} is for the report. */
    record Database(String kind, String jdbcUrl, String user, String password) {

        Connection connect() throws SQLException {
            return DriverManager.getConnection(jdbcUrl, user, password);
        }

        /** The same database with {@code schema} as the current schema. */
        Database inSchema(String schema) {
            String url = jdbcUrl.startsWith("jdbc:h2:") ? jdbcUrl + ";SCHEMA=" + schema.toUpperCase(java.util.Locale.ROOT)
                    : jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema;
            return new Database(kind, url, user, password);
        }
    }

    final String kafka;
    final String rocketMq;
    final URI redis;
    final Database database;
    final boolean externalKafka;
    private final KafkaBroker kafkaBroker;
    private final RocketMqBroker rocketMqBroker;
    private final List<AutoCloseable> started;

    private Infrastructure(String kafka, String rocketMq, URI redis, Database database, KafkaBroker kafkaBroker,
                           RocketMqBroker rocketMqBroker, List<AutoCloseable> started) {
        this.kafka = kafka;
        this.rocketMq = rocketMq;
        this.redis = redis;
        this.database = database;
        this.externalKafka = kafkaBroker == null;
        this.kafkaBroker = kafkaBroker;
        this.rocketMqBroker = rocketMqBroker;
        this.started = started;
    }

    /** Starts what is not configured; with {@code rocketMq} false, no RocketMQ at all. */
    static Infrastructure start(Path dir, boolean rocketMq, PrintStream out) throws Exception {
        System.setProperty(Fixtures.DIR_PROPERTY, dir.resolve("idem-testkit").toString());
        List<AutoCloseable> started = new ArrayList<>();
        try {
            String kafka = env("KAFKA_BOOTSTRAP");
            KafkaBroker kafkaBroker = null;
            if (kafka == null) {
                Started s = Fixtures.start(KafkaBroker.class);
                started.add(s);
                kafkaBroker = (KafkaBroker) s.value();
                kafka = kafkaBroker.bootstrapServers();
                out.println("  Kafka      in-process broker at " + kafka);
            } else {
                out.println("  Kafka      " + kafka + " (KAFKA_BOOTSTRAP)");
            }
            String nameServer = null;
            RocketMqBroker rocketMqBroker = null;
            if (rocketMq) {
                nameServer = env("ROCKETMQ_NAMESRV");
                if (nameServer == null) {
                    Started s = Fixtures.start(RocketMqBroker.class);
                    started.add(s);
                    rocketMqBroker = (RocketMqBroker) s.value();
                    nameServer = rocketMqBroker.nameServerAddress();
                    out.println("  RocketMQ   in-process name server and broker at " + nameServer);
                } else {
                    out.println("  RocketMQ   " + nameServer + " (ROCKETMQ_NAMESRV)");
                }
            }
            Started redis = Fixtures.start(RedisEndpoint.class);
            started.add(redis);
            URI redisUri = ((RedisEndpoint) redis.value()).uri();
            out.println("  Redis      " + redisUri);
            Database database = database(started, out);
            return new Infrastructure(kafka, nameServer, redisUri, database, kafkaBroker, rocketMqBroker, started);
        } catch (Exception | Error e) {
            closeAll(started);
            throw e;
        }
    }

    private static Database database(List<AutoCloseable> started, PrintStream out) throws SQLException {
        String url = env("JDBC_URL");
        if (url != null) {
            out.println("  Database   " + url + " (JDBC_URL)");
            return new Database(url.startsWith("jdbc:h2:") ? "H2" : "PostgreSQL", url,
                    orElse(env("JDBC_USER"), "postgres"), orElse(env("JDBC_PASSWORD"), ""));
        }
        PostgresProbe probe = Fixtures.postgres();
        if (probe.database().isPresent()) {
            PostgresDatabase db = probe.database().get();
            out.println("  Database   PostgreSQL at " + db.jdbcUrl());
            return new Database("PostgreSQL", db.jdbcUrl(), db.user(), db.password() == null ? "" : db.password());
        }
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        } catch (java.io.IOException e) {
            throw new SQLException("no free port for H2", e);
        }
        // H2 in this JVM, served over TCP: the service runs in other processes. In memory, kept
        // until this JVM ends.
        Server server = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists").start();
        started.add(server::stop);
        out.println("  Database   H2 in memory, served on port " + port + " (no PostgreSQL answered: "
                + probe.reason() + ")");
        return new Database("H2", "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:inventory;DB_CLOSE_DELAY=-1", "sa", "");
    }

    /** Creates the Kafka topics (and RocketMQ's, on the in-process broker; a configured one creates its own). */
    void createTopics(Names names, int partitions) throws Exception {
        Map<String, Integer> kafkaTopics = Map.of(names.topic(), partitions, names.kafkaDeadLetters(), 1,
                names.refundTopic(), 1);
        if (kafkaBroker != null) {
            kafkaTopics.forEach(kafkaBroker::createTopic);
        } else {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka))) {
                for (Map.Entry<String, Integer> topic : kafkaTopics.entrySet()) {
                    try {
                        admin.createTopics(List.of(new NewTopic(topic.getKey(), topic.getValue(), (short) 1)))
                                .all().get(30, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        if (!(e.getCause() instanceof TopicExistsException)) {
                            throw e;
                        }
                    }
                }
            }
        }
        if (rocketMqBroker != null) {
            rocketMqBroker.createTopic(names.topic(), partitions);
            rocketMqBroker.createTopic(names.rocketMqDeadLetters(), 1);
            rocketMqBroker.createRetryTopic(names.group());
        }
    }

    /** Drops and creates the run's schema (its tables, Idem's ledger included, start empty). */
    void freshSchema(String schema) throws SQLException {
        try (Connection c = database.connect(); Statement s = c.createStatement()) {
            s.execute("drop schema if exists " + schema + " cascade");
            s.execute("create schema " + schema);
        }
    }

    /** Drops the run's schema. */
    void dropSchema(String schema) throws SQLException {
        try (Connection c = database.connect(); Statement s = c.createStatement()) {
            s.execute("drop schema if exists " + schema + " cascade");
        }
    }

    @Override
    public void close() {
        closeAll(started);
    }

    private static void closeAll(List<AutoCloseable> started) {
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                org.slf4j.LoggerFactory.getLogger(Infrastructure.class).warn("stopping {} failed", started.get(i), e);
            }
        }
        started.clear();
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static String orElse(String value, String fallback) {
        return value == null ? fallback : value;
    }
}
