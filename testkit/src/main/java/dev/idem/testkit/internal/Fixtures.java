package dev.idem.testkit.internal;

import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Chooses and starts fixtures. The source is the system property {@code idem.testkit}:
 * {@code embedded} (default) or {@code containers}.
 */
public final class Fixtures {

    /** System property choosing where fixtures come from. */
    public static final String MODE_PROPERTY = "idem.testkit";
    /** System property for the folder that holds broker data and logs. */
    public static final String DIR_PROPERTY = "idem.testkit.dir";

    private Fixtures() {
    }

    /**
     * Starts the shared fixture of the given public type.
     *
     * @throws IllegalArgumentException for a type the test kit does not provide
     */
    public static Started start(Class<?> type) {
        boolean containers = containers();
        if (type == KafkaBroker.class) {
            return Started.self(containers ? ContainerFixtures.kafka() : EmbeddedKafka.start(workDir()));
        }
        if (type == RocketMqBroker.class) {
            return Started.self(containers ? ContainerFixtures.rocketMq() : EmbeddedRocketMq.start(workDir()));
        }
        if (type == RedisEndpoint.class) {
            return containers ? ContainerFixtures.redis() : LocalRedis.find(workDir());
        }
        if (type == PostgresDatabase.class) {
            throw new IllegalArgumentException("PostgresDatabase is probed with Fixtures.postgres(), not started");
        }
        throw new IllegalArgumentException("no fixture of type " + type.getName());
    }

    /** Looks for PostgreSQL: {@code IDEM_TEST_JDBC_URL}, else the local default, else containers. */
    public static PostgresProbe postgres() {
        return containers() ? ContainerFixtures.postgres() : LocalPostgres.probe();
    }

    /** Whether the environment variable {@code IDEM_TESTKIT_REQUIRE} lists the fixture. */
    public static boolean required(String fixture) {
        String required = System.getenv("IDEM_TESTKIT_REQUIRE");
        return required != null && required.toLowerCase(Locale.ROOT).contains(fixture);
    }

    /** The folder for broker data and logs: {@code idem.testkit.dir}, default {@code target/idem-testkit}. */
    static Path workDir() {
        return Path.of(System.getProperty(DIR_PROPERTY, "target/idem-testkit")).toAbsolutePath();
    }

    /** Testcontainers is an optional dependency of the test kit: say which jars the mode needs. */
    private static void requireTestcontainers() {
        try {
            Class.forName("org.testcontainers.containers.GenericContainer", false, Fixtures.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(MODE_PROPERTY + "=containers needs org.testcontainers:testcontainers,"
                    + " testcontainers-kafka and testcontainers-postgresql on the test classpath (optional"
                    + " dependencies of idem-testkit), but they are not there", e);
        }
    }

    private static boolean containers() {
        String mode = System.getProperty(MODE_PROPERTY, "embedded").trim();
        if (mode.isEmpty() || mode.equals("embedded")) {
            return false;
        }
        if (mode.equals("containers")) {
            requireTestcontainers();
            return true;
        }
        throw new IllegalArgumentException(
                MODE_PROPERTY + " must be 'embedded' or 'containers' but was '" + mode + "'");
    }
}
