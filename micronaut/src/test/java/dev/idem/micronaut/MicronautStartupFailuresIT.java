package dev.idem.micronaut;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import io.micronaut.context.ApplicationContext;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A wrong or missing setting fails the application's start-up with a message naming it, before
 * any consumer starts.
 */
@IdemTestKit
class MicronautStartupFailuresIT {

    private static Map<String, Object> valid(RedisEndpoint redis) {
        Map<String, Object> p = new HashMap<>();
        p.put("test.health.topic", "never-consumed");
        p.put("test.health.group", "never-joined");
        p.put("idem.redis.address", redis.uri().toString());
        p.put("idem.kafka.bootstrap.servers", "127.0.0.1:1");
        return p;
    }

    private static String failure(Map<String, Object> properties) {
        Throwable thrown = startAndStop(properties);
        assertThat(thrown).as("start-up should fail").isNotNull();
        StringBuilder messages = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }

    /** Starts a context and stops it (also when it fails to start, so nothing it began runs on). */
    static Throwable startAndStop(Map<String, Object> properties) {
        ApplicationContext context = ApplicationContext.builder().properties(properties).build();
        Throwable thrown = catchThrowable(context::start);
        try {
            context.stop();
        } catch (RuntimeException e) {
            // already failed; what matters is the start-up failure
        }
        return thrown;
    }

    private static Map<String, Object> withOutbox(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis);
        p.put("datasources.default.url", db.jdbcUrl());
        p.put("datasources.default.username", db.user());
        p.put("datasources.default.password", db.password() == null ? "" : db.password());
        p.put("datasources.default.driver-class-name", "org.postgresql.Driver");
        p.put("idem.ledger.table", "mn_failing_ledger");
        p.put("idem.ledger.create-table", true);
        p.put("idem.outbox.enabled", true);
        p.put("idem.outbox.table", "mn_failing_outbox");
        p.put("idem.outbox.create-table", true);
        return p;
    }

    @Test
    void anOutboxBrokerThatIsNoneIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = withOutbox(redis, db);
        p.put("idem.outbox.broker", "pulsar");
        assertThat(failure(p)).contains("idem.outbox.broker must be kafka or rocketmq but was 'pulsar'");
    }

    @Test
    void aMisspelledOutboxSettingIsNamed(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = withOutbox(redis, db);
        p.put("idem.outbox.batchsize", 10);
        assertThat(failure(p)).contains("idem.outbox.batchsize is not an Idem setting");
    }

    @Test
    void missingKafkaServers(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.remove("idem.kafka.bootstrap.servers");
        assertThat(failure(p)).contains("idem.kafka.bootstrap.servers is required");
    }

    @Test
    void aDoneWindowShorterThanTheAttemptsWindow(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.redis.done-window", "1h");
        assertThat(failure(p)).contains("idem.redis.done-window (PT1H) must be >= idem.redis.attempts-window (PT24H)");
    }

    @Test
    void aTracingKeysSettingThatIsNoneOfTheThree(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.tracing.keys", "hashd");
        assertThat(failure(p)).contains("idem.tracing.keys must be off, hashed or plain but was 'hashd'");
    }

    @Test
    void missingRedis(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.remove("idem.redis.address");
        assertThat(failure(p)).contains("idem.redis.address is required");
    }

    @Test
    void aSentinelUrlWithoutItsPrimaryName(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.redis.address", "redis-sentinel://ops:hunter2@127.0.0.1:26379");
        assertThat(failure(p)).contains("idem.redis.address", "no primary name after '#'")
                .doesNotContain("hunter2");
    }

    @Test
    void aBackoffWhoseStartOutgrowsItsBound(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.backoff-initial", "2m");
        p.put("idem.listeners.health-orders.backoff-max", "1m");
        assertThat(failure(p)).contains("idem.listeners.health-orders.backoff-*", "initial was PT2M");
    }

    @Test
    void notANumber(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.max-attempts", "abc");
        assertThat(failure(p)).contains("idem.listeners.health-orders.max-attempts must be a whole number but was 'abc'");
    }

    @Test
    void notADuration(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.lease", "soon");
        assertThat(failure(p)).contains("idem.listeners.health-orders.lease must be a duration");
    }

    @Test
    void aRocketMqSettingOnAKafkaListener(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.batch-size", "16");
        assertThat(failure(p)).contains("idem.listeners.health-orders.batch-size is a setting of RocketMQ listeners");
    }

    @Test
    void aKafkaListenersOwnSettingIsReadAndChecked(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.join-timeout", "soon");
        assertThat(failure(p)).contains("idem.listeners.health-orders.join-timeout must be a duration");
    }

    @Test
    void fatalExceptionsNameClassesThatAreThere(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.fatal-exceptions", java.util.List.of("java.lang.ArithmeticException",
                "com.example.NoSuchException"));
        assertThat(failure(p)).contains("idem.listeners.health-orders.fatal-exceptions names a class that is not "
                + "there: 'com.example.NoSuchException'");
    }

    @Test
    void misspelledSetting(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.max-attempt", "3");
        assertThat(failure(p)).contains("idem.listeners.health-orders.max-attempt is not an Idem setting");
    }

    @Test
    void settingsForNoListener(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.helth-orders.lease", "5s");
        assertThat(failure(p)).contains("idem.listeners.helth-orders names no listener");
    }

    @Test
    void wrongKafkaClientSetting(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.kafka.max.poll.interval.ms", "abc");
        assertThat(failure(p)).contains("idem.kafka").contains("max.poll.interval.ms");
    }

    @Test
    void retriesThatCannotFitTheWindows(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        // 5,000 attempts, a minute's backoff apart, outlast the one-day attempts window.
        p.put("idem.listeners.health-orders.max-attempts", "5000");
        assertThat(failure(p)).contains("idem.listeners.health-orders").contains("maxAttempts (5000)");
    }

    @Test
    void noAttemptsAtAll(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("idem.listeners.health-orders.max-attempts", "0");
        assertThat(failure(p)).contains("idem.listeners.health-orders.max-attempts must be >= 1 but was 0");
    }

    @Test
    void twoListenersWithOneName(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("test.wrong", "same-name");
        assertThat(failure(p)).contains("two Idem listeners are named 'twice'");
    }

    @Test
    void noPayloadParameter(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("test.wrong", "no-payload");
        assertThat(failure(p)).contains("has no payload parameter");
    }

    @Test
    void keyPropertyThePayloadLacks(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("test.wrong", "no-property");
        assertThat(failure(p)).contains("Order has no property 'orderId'");
    }

    @Test
    void aWrappedListenerIsNamedByItsGroupAndTopic(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("test.wrong", "wrapped");
        p.put("test.wrong.group", "stock");
        p.put("test.wrong.topic", "order-paid");
        p.put("kafka.bootstrap.servers", "127.0.0.1:1");
        p.put("idem.listeners.stock-order-paid.max-attempts", "abc");
        assertThat(failure(p)).contains("idem.listeners.stock-order-paid.max-attempts must be a whole number");
    }

    @Test
    void aWrappedListenerRefusesSettingsItCannotHonour(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("test.wrong", "wrapped");
        p.put("test.wrong.group", "stock");
        p.put("test.wrong.topic", "order-paid");
        p.put("kafka.bootstrap.servers", "127.0.0.1:1");
        p.put("idem.listeners.stock-order-paid.concurrency", "4");
        assertThat(failure(p)).contains("idem.listeners.stock-order-paid.concurrency is not a setting of a wrapped");
    }

    @Test
    void aWrappedListenerAndAnIdempotentListenerWithOneName(RedisEndpoint redis) {
        Map<String, Object> p = valid(redis);
        p.put("test.wrong", "wrapped-same-name");
        p.put("kafka.bootstrap.servers", "127.0.0.1:1");
        assertThat(failure(p)).contains("two Idem listeners are named 'health-orders'");
    }

    private static Map<String, Object> twoDataSources(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = valid(redis);
        for (String name : new String[] {"orders", "reports"}) {
            p.put("datasources." + name + ".url", db.jdbcUrl());
            p.put("datasources." + name + ".username", db.user());
            p.put("datasources." + name + ".password", db.password());
        }
        p.put("idem.ledger.table", "micronaut_never_created");
        p.put("test.ledger.topic", "never-consumed");
        p.put("test.ledger.group", "never-joined");
        return p;
    }

    @Test
    void twoDataSourcesAndNoDefaultFailStartUpNamingTheSettingInsteadOfRunningRedisOnly(RedisEndpoint redis,
                                                                                       PostgresDatabase db) {
        assertThat(failure(twoDataSources(redis, db))).contains("idem.ledger.data-source");
    }

    @Test
    void theDataSourceNamedBySettingIsTheLedgers(RedisEndpoint redis, PostgresDatabase db) {
        Map<String, Object> p = twoDataSources(redis, db);
        p.put("idem.ledger.data-source", "orders");
        // The ledger is built on it: its missing table is what fails now.
        assertThat(failure(p)).contains("micronaut_never_created").doesNotContain("idem.ledger.data-source");
    }
}
