package dev.idem.micronaut;

import dev.idem.core.outbox.Outbox;
import dev.idem.listener.OutboxRuntime;
import dev.idem.listener.OutboxSettings;
import dev.idem.micronaut.internal.PropertyReader;
import io.micronaut.context.BeanContext;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.reflect.ClassUtils;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.time.Duration;
import java.util.Set;

/**
 * The outbox in a Micronaut application ({@code idem.outbox.enabled=true}): the table on the
 * ledger's {@code DataSource}, its relay from {@code idem.outbox.*} started with the context and
 * stopped before the {@code DataSource}, and an {@link Outbox} that writes on the transaction
 * Micronaut's transaction manager has open on the calling thread.
 */
@Factory
@Requires(property = "idem.outbox.enabled", value = "true")
final class IdemOutboxFactory {

    static final Set<String> KEYS = Set.of("enabled", "table", "create-table", "broker", "relay", "poll-interval",
            "batch-size", "keep-sent", "max-backoff", "stuck-after");

    @Context
    @Bean(preDestroy = "close")
    OutboxRuntime idemOutboxRuntime(IdemResources resources, Environment environment, BeanContext context) {
        resources.checkKeys("idem.outbox", KEYS);
        try {
            return OutboxRuntime.start(resources.outboxDataSource().pool(), settings(environment),
                    resources::kafkaSettings, () -> new PropertyReader(environment).required("idem.rocketmq.name-server"),
                    relay -> {
                        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
                                IdemOutboxFactory.class.getClassLoader())) {
                            context.findBean(io.micrometer.core.instrument.MeterRegistry.class)
                                    .ifPresent(relay::meterRegistry);
                        }
                    });
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
    }

    @Singleton
    Outbox idemOutbox(OutboxRuntime runtime, IdemResources resources) {
        io.micronaut.transaction.TransactionOperations<Connection> transactions = resources.outboxDataSource()
                .transactions();
        return runtime.outbox().on(() -> {
            io.micronaut.transaction.TransactionStatus<?> status = transactions.findTransactionStatus().orElse(null);
            Connection connection = status == null || status.isCompleted() || !inTransaction(status) ? null
                    : (Connection) status.getConnection();
            if (connection == null || connection.getAutoCommit()) {
                throw new IllegalStateException("Outbox.send needs a transaction that has not ended: call it from an "
                        + "@IdempotentListener on the ledger or a @Transactional method, not after its commit (the "
                        + "row must commit with the effect)");
            }
            return connection;
        });
    }

    /** Whether the status runs in a transaction: not one of a method that runs outside any. */
    private static boolean inTransaction(io.micronaut.transaction.TransactionStatus<?> status) {
        io.micronaut.transaction.TransactionDefinition.Propagation propagation =
                status.getTransactionDefinition().getPropagationBehavior();
        return propagation != io.micronaut.transaction.TransactionDefinition.Propagation.NOT_SUPPORTED
                && propagation != io.micronaut.transaction.TransactionDefinition.Propagation.NEVER;
    }

    private static OutboxSettings settings(Environment environment) {
        PropertyReader properties = new PropertyReader(environment);
        OutboxSettings d = OutboxSettings.defaults();
        String keepSent = environment.getProperty("idem.outbox.keep-sent", String.class).orElse("0").trim();
        // Zero keeps nothing; Durations reads only positive durations.
        boolean keepNone = keepSent.matches("(?i)0+\\s*(ns|us|ms|s|m|h|d)?|PT0+S");
        return new OutboxSettings(
                environment.getProperty("idem.outbox.table", String.class).orElse(d.table()),
                environment.getProperty("idem.outbox.create-table", Boolean.class).orElse(d.createTable()),
                environment.getProperty("idem.outbox.broker", String.class).orElse(d.broker()),
                environment.getProperty("idem.outbox.relay", Boolean.class).orElse(d.relay()),
                duration(properties, "idem.outbox.poll-interval", d.pollInterval()),
                environment.getProperty("idem.outbox.batch-size", Integer.class).orElse(d.batchSize()),
                keepNone ? Duration.ZERO : duration(properties, "idem.outbox.keep-sent", d.keepSent()),
                duration(properties, "idem.outbox.max-backoff", d.maxBackoff()),
                duration(properties, "idem.outbox.stuck-after", d.stuckAfter()));
    }

    /** The setting's duration when it is set (a wrong one fails naming it), else the shared default. */
    private static Duration duration(PropertyReader properties, String key, Duration fallback) {
        return properties.isSet(key) ? properties.durationSetting(key, "", key) : fallback;
    }
}
