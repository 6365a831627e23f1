package example.micronaut;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.micronaut.context.ApplicationContext;
import io.micronaut.context.env.Environment;
import org.junit.jupiter.api.Test;

/**
 * The README's configuration example (this project's application.yml) reads as it says: defaults
 * that contain ':' survive in backticks, and the listeners' settings are where Idem looks for them.
 * Only the environment is loaded: nothing connects.
 */
class ReadmeConfigurationTest {

    @Test
    void theDefaultsOfTheReadmesYamlAreWhole() {
        try (ApplicationContext context = ApplicationContext.builder().build()) {
            Environment environment = context.getEnvironment().start();
            assertEquals(orDefault("REDIS_URL", "redis://127.0.0.1:6379"), value(environment, "idem.redis.address"));
            assertEquals(orDefault("KAFKA_BOOTSTRAP", "localhost:9092"), value(environment, "idem.kafka.bootstrap.servers"));
            assertEquals(orDefault("KAFKA_BOOTSTRAP", "localhost:9092"), value(environment, "kafka.bootstrap.servers"));
            assertEquals(orDefault("JDBC_URL", "jdbc:postgresql://localhost:5432/inventory"),
                    value(environment, "datasources.default.url"));
            assertEquals("5", value(environment, "idem.listeners.deduct-stock.max-attempts"));
            assertEquals("30s", value(environment, "idem.listeners.deduct-stock.lease"));
            assertEquals("3", value(environment, "idem.listeners.billing-payments.max-attempts"));
        }
    }

    @Test
    void logbackClassicAndCoreAreOneVersionSoTheApplicationLogs() throws Exception {
        // Different versions: logback drops its appenders with a warning, and nothing is logged.
        String classic = Class.forName("ch.qos.logback.classic.Logger").getPackage().getImplementationVersion();
        String core = Class.forName("ch.qos.logback.core.Appender").getPackage().getImplementationVersion();
        assertNotNull(classic, "logback-classic's version");
        assertEquals(classic, core, "logback-core must be logback-classic's version");
    }

    private static String value(Environment environment, String property) {
        return environment.getProperty(property, String.class).orElse("<unset>");
    }

    private static String orDefault(String variable, String fallback) {
        String value = System.getenv(variable);
        return value == null || value.isBlank() ? fallback : value;
    }
}
