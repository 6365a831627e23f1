package dev.idem.spring;

import dev.idem.core.Backoff;
import dev.idem.core.Compensation;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.redis.RedisClaimStore;
import dev.idem.spring.internal.ListenerConsumers;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerPlan;
import dev.idem.spring.internal.ListenerPlans;
import dev.idem.spring.internal.SpringTransactions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Starts every {@link IdempotentListener} once the context has refreshed and stops them in order
 * when it closes: stop taking work, let running records finish or release them, commit, each bounded
 * by the listener's {@code close-timeout}, and only then does the context shut the Redis client
 * down. Thread-safe.
 */
public final class IdemListenerContainer implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(IdemListenerContainer.class);

    /** A started listener: its plan and its consumer. */
    public record RunningListener(String name, Broker broker, String topic, String group, IdemConsumer consumer,
                                  Duration closeTimeout) {
    }

    private final ListenerMethods methods;
    private final ListableBeanFactory beans;
    private final Environment environment;
    private final IdemProperties properties;
    private final RedisClaimStore claims;
    private final List<RunningListener> running = new ArrayList<>();
    private boolean started;

    public IdemListenerContainer(ListenerMethods methods, ListableBeanFactory beans, Environment environment,
                                 IdemProperties properties, RedisClaimStore claims) {
        this.methods = methods;
        this.beans = beans;
        this.environment = environment;
        this.properties = properties;
        this.claims = claims;
    }

    /** The listeners started, in start order. */
    public synchronized List<RunningListener> listeners() {
        return List.copyOf(running);
    }

    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        List<ListenerPlan> plans = new ListenerPlans(beans, environment, properties).plans(methods);
        if (plans.isEmpty()) {
            return;
        }
        JdbcEffectLedger ledger = plans.stream().anyMatch(ListenerPlan::ledger) ? ledger() : null;
        try {
            for (ListenerPlan plan : plans) {
                IdemConsumer consumer = consumer(plan, processor(plan, ledger));
                consumer.start();
                running.add(new RunningListener(plan.name(), plan.broker(), plan.topic(), plan.group(), consumer,
                        plan.settings().getCloseTimeout()));
                LOG.info("Idem listener '{}' consumes {} as {} on {}{}", plan.name(), plan.topic(), plan.group(),
                        plan.broker(), plan.ledger() && ledger != null ? "" : " in Redis-only mode (no ledger)");
            }
        } catch (RuntimeException | Error e) {
            stop();
            throw e;
        }
    }

    /**
     * Closes every consumer in reverse start order; a Kafka consumer's close returns at its bound while
     * a handler may still run, so this waits (up to the close timeout again) until each has let go of
     * everything: that record's completion needs Redis, which the context closes next.
     */
    @Override
    public synchronized void stop() {
        List<CompletableFuture<Void>> released = new ArrayList<>();
        Duration longest = Duration.ZERO;
        for (int i = running.size() - 1; i >= 0; i--) {
            RunningListener listener = running.get(i);
            try {
                listener.consumer().close();
            } catch (RuntimeException e) {
                LOG.warn("closing Idem listener '{}' failed", listener.name(), e);
            }
            released.add(listener.consumer().released().toCompletableFuture());
            longest = listener.closeTimeout().compareTo(longest) > 0 ? listener.closeTimeout() : longest;
        }
        running.clear();
        try {
            CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).get(longest.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            LOG.warn("Idem listeners still running records after {}; the Redis client closes now and their claims "
                    + "lapse with their leases", longest);
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return started && !running.isEmpty();
    }

    private IdempotentProcessor.Builder<Object> processor(ListenerPlan plan, @Nullable JdbcEffectLedger ledger) {
        IdempotentProcessor.Builder<Object> processor;
        boolean onLedger = plan.ledger() && ledger != null;
        if (onLedger) {
            processor = ledger.processor((delivery, tx) -> plan.invoker().invoke(delivery, tx));
        } else {
            if (plan.invoker().wantsConnection()) {
                throw new IllegalStateException("@IdempotentListener method " + plan.where() + " takes a Connection, "
                        + "which only the ledger's transaction gives: add a DataSource or drop the parameter");
            }
            processor = IdempotentProcessor.<Object>builder(delivery -> plan.invoker().invoke(delivery, null))
                    .dedupCheck(DedupCheck.none());
        }
        IdemProperties.Listener s = plan.settings();
        String prefix = "idem.listeners." + plan.name() + ".";
        try {
            processor.claims(claims).codec(plan.codec()).keys(plan.keys()).maxAttempts(plan.maxAttempts())
                    .lease(plan.lease()).maxDeferral(s.getMaxDeferral())
                    .compensationAttempts(s.getCompensationAttempts())
                    .backoff(Backoff.exponential(s.getBackoffInitial(), s.getBackoffMax(), s.getBackoffJitter()));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(prefix + "*: " + e.getMessage(), e);
        }
        Compensation compensation = plan.compensation() != null ? plan.compensation()
                : plan.compensationHook() != null ? plan.compensationHook()::compensate : null;
        if (compensation != null) {
            processor.compensation(onLedger ? ledger.compensation((letter, tx) -> compensation.compensate(letter))
                    : compensation);
        }
        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", getClass().getClassLoader())) {
            Meters.register(beans, processor, plan.name());
        }
        return processor;
    }

    private IdemConsumer consumer(ListenerPlan plan, IdempotentProcessor.Builder<Object> processor) {
        try {
            return switch (plan.broker()) {
                case KAFKA -> ListenerConsumers.kafka(plan, processor, kafkaSettings());
                case KAFKA_SHARE -> ListenerConsumers.kafkaShare(plan, processor, kafkaSettings());
                case ROCKETMQ -> ListenerConsumers.rocketMq(plan, processor, nameServer());
            };
        } catch (IllegalArgumentException e) {
            String origin = plan.broker() == Broker.ROCKETMQ ? "idem.rocketmq" : "idem.kafka";
            throw new IllegalStateException("Idem listener '" + plan.name() + "' (" + origin + ", idem.listeners."
                    + plan.name() + "): " + e.getMessage(), e);
        }
    }

    private Map<String, Object> kafkaSettings() {
        Map<String, Object> settings = new HashMap<>(properties.getKafka());
        Object servers = settings.get("bootstrap.servers");
        if (servers == null || servers.toString().isBlank()) {
            throw new IllegalStateException("idem.kafka.bootstrap.servers is required but not set "
                    + "(idem.kafka.* are the Kafka client's settings)");
        }
        settings.putIfAbsent("auto.offset.reset", "earliest");
        return settings;
    }

    private String nameServer() {
        String nameServer = properties.getRocketmq().getNameServer();
        if (nameServer == null || nameServer.isBlank()) {
            throw new IllegalStateException("idem.rocketmq.name-server is required for RocketMQ listeners but not set");
        }
        return nameServer;
    }

    /** The ledger on the application's {@code DataSource}, in its transaction manager; null when disabled or absent. */
    private @Nullable JdbcEffectLedger ledger() {
        IdemProperties.Ledger settings = properties.getLedger();
        DataSource dataSource = settings.isEnabled() ? beans.getBeanProvider(DataSource.class).getIfUnique() : null;
        if (dataSource == null) {
            return null;
        }
        PlatformTransactionManager transactions = beans.getBeanProvider(PlatformTransactionManager.class).getIfUnique();
        if (transactions == null) {
            transactions = new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource);
        }
        try {
            return JdbcEffectLedger.builder(dataSource).table(settings.getTable())
                    .createTable(settings.isCreateTable()).transactions(new SpringTransactions(dataSource, transactions))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("idem.ledger: " + e.getMessage(), e);
        }
    }

    /** Micrometer, touched only when it is on the class path. */
    private static final class Meters {
        static void register(ListableBeanFactory beans, IdempotentProcessor.Builder<Object> processor, String name) {
            io.micrometer.core.instrument.MeterRegistry registry =
                    beans.getBeanProvider(io.micrometer.core.instrument.MeterRegistry.class).getIfUnique();
            if (registry != null) {
                processor.meterRegistry(registry).meterTag("listener", name);
            }
        }
    }
}
