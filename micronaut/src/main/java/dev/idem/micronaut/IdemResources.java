package dev.idem.micronaut;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.TraceKeys;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerTransactions;
import dev.idem.micronaut.internal.MicronautTransactions;
import dev.idem.micronaut.internal.PropertyReader;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.RedisUrl;
import io.micronaut.context.BeanContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.context.exceptions.NonUniqueBeanException;
import io.micronaut.core.reflect.ClassUtils;
import io.micronaut.core.type.Argument;
import io.micronaut.core.util.StringUtils;
import io.micronaut.inject.qualifiers.Qualifiers;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every Idem listener and wrapped method shares, made from the configuration on first use:
 * the Redis client and claim store ({@code idem.redis.*}), the effect ledger ({@code idem.ledger.*})
 * and the Kafka client settings ({@code idem.kafka.*}). A Redis client Idem made is shut down once
 * the last record that may still need it has ended.
 */
@Singleton
final class IdemResources {

    private static final Logger LOG = LoggerFactory.getLogger(IdemResources.class);
    static final Set<String> REDIS_KEYS = Set.of("address", "key-prefix", "done-window", "guarded-done-window",
            "attempts-window");
    static final Set<String> TRACING_KEYS = Set.of("enabled", "keys");

    private final BeanContext context;
    private final Environment environment;
    private final PropertyReader properties;
    // Made on first use, let go of at close.
    private @Nullable RedissonClient ownRedisson;
    private @Nullable RedissonClient redisson;
    private @Nullable RedisClaimStore claims;

    IdemResources(BeanContext context, Environment environment) {
        this.context = context;
        this.environment = environment;
        this.properties = new PropertyReader(environment);
    }

    /** The Redis client Idem's claims use, once made. */
    synchronized Optional<RedissonClient> redisson() {
        return Optional.ofNullable(redisson);
    }

    /**
     * Shuts down the Redis client Idem made, once every one of {@code released} has completed (a
     * record still running needs Redis for its completion).
     */
    synchronized void closeAfter(List<CompletableFuture<Void>> released) {
        if (ownRedisson != null) {
            RedissonClient client = ownRedisson;
            CompletableFuture<Void> all = CompletableFuture.allOf(released.toArray(CompletableFuture[]::new));
            if (!all.isDone()) {
                LOG.info("Idem's Redis client closes once the records still running end");
            }
            all.whenComplete((done, failure) -> client.shutdown());
            ownRedisson = null;
            redisson = null;
            claims = null;
        }
    }

    /**
     * Gives a listener's processor the application's meter registry and tracer, where it has them
     * (each touched only when on the class path): meters tagged with the listener's name, spans
     * unless {@code idem.tracing.enabled} is false, keys on them as {@code idem.tracing.keys} says.
     */
    void observe(IdempotentProcessor.Builder<Object> processor, String listener) {
        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", getClass().getClassLoader())) {
            context.findBean(io.micrometer.core.instrument.MeterRegistry.class).ifPresent(registry ->
                    processor.meterRegistry(registry).meterTag("listener", listener));
        }
        checkKeys("idem.tracing", TRACING_KEYS);
        if (environment.getProperty("idem.tracing.enabled", Boolean.class).orElse(true)
                && ClassUtils.isPresent("io.opentelemetry.api.OpenTelemetry", getClass().getClassLoader())) {
            TraceKeys keys = environment.getProperty("idem.tracing.keys", String.class).map(IdemResources::traceKeys)
                    .orElse(TraceKeys.OFF);
            context.findBean(io.opentelemetry.api.OpenTelemetry.class).ifPresent(otel ->
                    processor.openTelemetry(otel).traceKeys(keys));
        }
    }

    private static TraceKeys traceKeys(String value) {
        try {
            return TraceKeys.valueOf(value.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new io.micronaut.context.exceptions.ConfigurationException("idem.tracing.keys must be off, hashed or "
                    + "plain but was '" + value + "'");
        }
    }

    void checkKeys(String prefix, Set<String> known) {
        properties.checkKeys(prefix, known, "an Idem setting");
    }

    /** The {@code idem.kafka.*} properties as the Kafka client takes them (a list joined with ','). */
    Map<String, Object> kafkaClientSettings() {
        Map<String, Object> raw = environment.getProperties("idem.kafka",
                io.micronaut.core.naming.conventions.StringConvention.RAW);
        Map<String, Object> settings = new HashMap<>();
        raw.forEach((k, v) -> settings.put(k, v instanceof Collection<?> c
                ? c.stream().map(String::valueOf).collect(Collectors.joining(",")) : v));
        return settings;
    }

    /** Idem's Kafka consumer settings ({@code idem.kafka.*}), {@code bootstrap.servers} required. */
    Map<String, Object> kafkaSettings() {
        Map<String, Object> settings = kafkaClientSettings();
        Object servers = settings.get("bootstrap.servers");
        if (servers == null || servers.toString().isBlank()) {
            throw new ConfigurationException("idem.kafka.bootstrap.servers is required but not set "
                    + "(idem.kafka.* are the Kafka client's settings)");
        }
        settings.putIfAbsent("auto.offset.reset", "earliest");
        return settings;
    }

    /** The claim store every listener shares (and {@link Idempotent} wrappers), made on first use. */
    synchronized RedisClaimStore claimStore() {
        if (claims == null) {
            checkKeys("idem.redis", REDIS_KEYS);
            claims = newClaimStore();
        }
        return claims;
    }

    private RedisClaimStore newClaimStore() {
        Optional<String> address = environment.getProperty("idem.redis.address", String.class).filter(StringUtils::hasText);
        if (address.isPresent()) {
            Config config;
            try {
                config = RedisUrl.parse(address.get()).config();
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("idem.redis.address: " + e.getMessage(), e);
            }
            try {
                ownRedisson = Redisson.create(config);
            } catch (RuntimeException e) {
                throw new ConfigurationException("idem.redis.address '" + RedisUrl.redacted(address.get())
                        + "': cannot connect: " + e.getMessage(), e);
            }
            redisson = ownRedisson;
        } else {
            redisson = context.findBean(RedissonClient.class).orElseThrow(() -> new ConfigurationException(
                    "idem.redis.address is required but not set (or provide a RedissonClient bean)"));
        }
        RedisClaimStore.Builder builder = RedisClaimStore.builder(redisson);
        environment.getProperty("idem.redis.key-prefix", String.class).ifPresent(builder::keyPrefix);
        environment.getProperty("idem.redis.done-window", java.time.Duration.class).ifPresent(builder::doneWindow);
        environment.getProperty("idem.redis.attempts-window", java.time.Duration.class).ifPresent(builder::attemptsWindow);
        environment.getProperty("idem.redis.guarded-done-window", java.time.Duration.class)
                .ifPresent(builder::guardedDoneWindow);
        RedisClaimStore store;
        try {
            store = builder.build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("idem.redis.key-prefix, done-window, guarded-done-window, attempts-window: "
                    + e.getMessage(), e);
        }
        if (store.doneWindow().compareTo(store.attemptsWindow()) < 0) {
            throw new ConfigurationException("idem.redis.done-window (" + store.doneWindow() + ") must be >= "
                    + "idem.redis.attempts-window (" + store.attemptsWindow() + "): set both, e.g. 1h");
        }
        return store;
    }

    /** The effect ledger on the application's {@code DataSource}, or null when disabled or there is none. */
    @Nullable JdbcEffectLedger ledger() {
        if (!environment.getProperty("idem.ledger.enabled", Boolean.class).orElse(true)) {
            return null;
        }
        Optional<String> named = environment.getProperty("idem.ledger.data-source", String.class)
                .filter(StringUtils::isNotEmpty);
        Optional<DataSource> dataSource = dataSource(named);
        if (dataSource.isEmpty()) {
            return null;
        }
        // Micronaut Data's DataSource bean hands out the current transaction's connection and refuses
        // outside one; the ledger's checks run outside the handler's transaction, so they use the
        // pool behind it. The handler's transaction goes through Micronaut's transaction manager.
        JdbcEffectLedger.Builder builder = JdbcEffectLedger.builder(target(dataSource.get()))
                .createTable(environment.getProperty("idem.ledger.create-table", Boolean.class).orElse(false));
        environment.getProperty("idem.ledger.table", String.class).ifPresent(builder::table);
        transactions(named).ifPresent(builder::transactions);
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("idem.ledger: " + e.getMessage(), e);
        }
    }

    /**
     * The ledger's {@code DataSource}: the one {@code idem.ledger.data-source} names, else the only
     * (or primary) one. Several and none primary fail start-up naming the setting, never Redis-only.
     */
    private Optional<DataSource> dataSource(Optional<String> named) {
        if (named.isPresent()) {
            Optional<DataSource> chosen = context.findBean(DataSource.class, Qualifiers.byName(named.get()));
            if (chosen.isEmpty()) {
                throw new ConfigurationException("idem.ledger.data-source names '" + named.get()
                        + "', but there is no DataSource of that name (datasources.<name>.*)");
            }
            return chosen;
        }
        try {
            return context.findBean(DataSource.class);
        } catch (NonUniqueBeanException e) {
            throw new ConfigurationException("idem.ledger: several DataSources and none is the default: set "
                    + "idem.ledger.data-source to the name of the one the ledger and the listeners' writes use, or "
                    + "idem.ledger.enabled=false for Redis-only mode", e);
        }
    }

    private DataSource target(DataSource dataSource) {
        if (ClassUtils.isPresent("io.micronaut.jdbc.DataSourceResolver", getClass().getClassLoader())) {
            return context.findBean(io.micronaut.jdbc.DataSourceResolver.class)
                    .map(resolver -> resolver.resolve(dataSource)).orElse(dataSource);
        }
        return dataSource;
    }

    /**
     * What the outbox writes through: the pool behind the ledger's {@code DataSource} (the relay's
     * own transactions) and its transaction manager (the senders' transactions).
     *
     * @throws ConfigurationException naming the setting when there is no {@code DataSource} or no
     *                                transaction manager
     */
    OutboxDataSource outboxDataSource() {
        Optional<String> named = environment.getProperty("idem.ledger.data-source", String.class)
                .filter(StringUtils::isNotEmpty);
        DataSource dataSource = dataSource(named).orElseThrow(() -> new ConfigurationException("idem.outbox.enabled "
                + "is true but the application has no DataSource: the outbox is a table beside the effects "
                + "(datasources.default.*)"));
        io.micronaut.transaction.TransactionOperations<Connection> operations = operations(named)
                .orElseThrow(() -> new ConfigurationException("idem.outbox.enabled is true but the application has "
                        + "no transaction manager: add micronaut-data-tx-jdbc"));
        return new OutboxDataSource(target(dataSource), operations);
    }

    /** The pool behind the outbox's {@code DataSource} and its transaction manager. */
    record OutboxDataSource(DataSource pool, io.micronaut.transaction.TransactionOperations<Connection> transactions) {
    }

    private Optional<LedgerTransactions> transactions(Optional<String> named) {
        return operations(named).map(MicronautTransactions::new);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Optional<io.micronaut.transaction.TransactionOperations<Connection>> operations(Optional<String> named) {
        if (!ClassUtils.isPresent("io.micronaut.transaction.TransactionOperations", getClass().getClassLoader())) {
            return Optional.empty();
        }
        Argument<io.micronaut.transaction.TransactionOperations> type =
                Argument.of(io.micronaut.transaction.TransactionOperations.class, Connection.class);
        Optional<io.micronaut.transaction.TransactionOperations<Connection>> operations;
        try {
            operations = (Optional) (named.isPresent() ? context.findBean(type, Qualifiers.byName(named.get()))
                    : context.findBean(type));
        } catch (NonUniqueBeanException e) {
            throw new ConfigurationException("idem.ledger: several transaction managers and none is the default: "
                    + "set idem.ledger.data-source to the name of the ledger's DataSource", e);
        }
        return operations;
    }
}
