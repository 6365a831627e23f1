package dev.idem.micronaut;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.listener.ListenerBroker;
import dev.idem.listener.ListenerProcessors;
import dev.idem.listener.ListenerSpec;
import dev.idem.micronaut.internal.Brokers;
import dev.idem.micronaut.internal.PropertyReader;
import dev.idem.redis.RedisClaimStore;
import io.micronaut.context.BeanContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.reflect.ClassUtils;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a consumer for every {@link IdempotentListener} method once the application context has
 * started, and closes them, in reverse order, when it stops: each stops taking work, lets running
 * handlers finish or releases their claims, and commits. Every setting is checked before anything
 * starts; a wrong or missing one fails start-up with a {@link ConfigurationException} naming it.
 */
@Singleton
public final class IdemListeners implements ApplicationEventListener<StartupEvent> {

    private static final Logger LOG = LoggerFactory.getLogger(IdemListeners.class);
    private static final Set<String> ROCKETMQ_KEYS = Set.of("name-server");
    private static final Set<String> LEDGER_KEYS = Set.of("table", "create-table", "enabled", "data-source");

    private final BeanContext context;
    private final PropertyReader properties;
    private final ListenerPlans plans;
    private final IdemResources resources;
    private final List<RunningListener> running = new ArrayList<>();
    private boolean started;

    IdemListeners(BeanContext context, Environment environment, IdemListenerRegistry registry,
                  IdemResources resources) {
        this.context = context;
        this.properties = new PropertyReader(environment);
        this.plans = new ListenerPlans(context, environment, properties, registry);
        this.resources = resources;
    }

    /**
     * A started listener: its name, broker, whether its consumer is running, how long its oldest
     * deferred message has been coming back, how to close it, and when, closed, it has let go of
     * everything (no record runs, its dead-letter producer closed).
     */
    public record RunningListener(String name, Broker broker, String topic, String group,
                                  BooleanSupplier isRunning, Supplier<Optional<Duration>> oldestDeferral,
                                  AutoCloseable closer, CompletionStage<Void> released) {
    }

    @Override
    public void onApplicationEvent(StartupEvent event) {
        start();
    }

    /** The listeners started, in start order. */
    public synchronized List<RunningListener> listeners() {
        return List.copyOf(running);
    }

    /** The Redis client Idem's claims use. */
    public Optional<RedissonClient> redisson() {
        return resources.redisson();
    }

    synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        List<ListenerSpec> all = plans.plans();
        if (all.isEmpty()) {
            return;
        }
        resources.checkKeys("idem.redis", IdemResources.REDIS_KEYS);
        resources.checkKeys("idem.rocketmq", ROCKETMQ_KEYS);
        resources.checkKeys("idem.ledger", LEDGER_KEYS);
        Map<String, Object> kafka = all.stream().anyMatch(p -> p.broker() == ListenerBroker.KAFKA) ? resources.kafkaSettings()
                : Map.of();
        String nameServer = all.stream().anyMatch(p -> p.broker() == ListenerBroker.ROCKETMQ)
                ? properties.required("idem.rocketmq.name-server") : null;
        JdbcEffectLedger ledger = all.stream().anyMatch(ListenerSpec::ledger) ? resources.ledger() : null;
        RedisClaimStore claims = resources.claimStore();
        try {
            for (ListenerSpec plan : all) {
                running.add(startOne(plan, claims, ledger, kafka, nameServer));
                LOG.info("Idem listener '{}' consumes {} as {} on {}", plan.name(), plan.topic(), plan.group(), plan.broker());
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * Closes every consumer in reverse start order, then the Redis client Idem created, once no record
     * runs any more: a consumer's close returns at its bound while a handler may still run, and that
     * record's completion needs Redis (without it, the key's claim lapses and, in Redis-only mode, a
     * copy runs it again).
     */
    @PreDestroy
    public synchronized void close() {
        List<CompletableFuture<Void>> released = new ArrayList<>();
        for (int i = running.size() - 1; i >= 0; i--) {
            RunningListener listener = running.get(i);
            try {
                listener.closer().close();
            } catch (Exception e) {
                LOG.warn("closing Idem listener '{}' failed", listener.name(), e);
            }
            released.add(listener.released().toCompletableFuture());
        }
        running.clear();
        resources.closeAfter(released);
    }

    // ---- consumers

    private RunningListener startOne(ListenerSpec plan, RedisClaimStore claims, @Nullable JdbcEffectLedger ledger,
                                     Map<String, Object> kafka, @Nullable String nameServer) {
        try {
            IdempotentProcessor.Builder<Object> processor = ListenerProcessors.processor(plan, claims, ledger);
            resources.observe(processor, plan.name());
            return plan.broker() == ListenerBroker.KAFKA ? Brokers.kafka(plan, processor, kafka)
                    : Brokers.rocketMq(plan, processor, Objects.requireNonNull(nameServer, "nameServer"));
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
    }
}
