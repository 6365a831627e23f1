package dev.idem.spring;

import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.spring.internal.ListenerConsumers;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerPlan;
import dev.idem.spring.internal.ListenerPlans;
import dev.idem.spring.internal.ListenerProcessors;
import dev.idem.spring.internal.kafka.KafkaListenerWrapping;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Starts every {@link IdempotentListener} once the context has refreshed (and puts Idem around every
 * {@link Idempotent} spring-kafka listener before its container starts) and stops them in order when
 * it closes: stop taking work, let running records finish or release them, commit, each bounded by
 * the listener's {@code close-timeout}, and only then does the context shut the Redis client down.
 * Thread-safe.
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
    private final ListenerProcessors processors;
    private final List<RunningListener> running = new ArrayList<>();
    private @Nullable KafkaListenerWrapping wrapping;
    private boolean started;
    private boolean stopped;

    public IdemListenerContainer(ListenerMethods methods, ListableBeanFactory beans, Environment environment,
                                 IdemProperties properties, ListenerProcessors processors) {
        this.methods = methods;
        this.beans = beans;
        this.environment = environment;
        this.properties = properties;
        this.processors = processors;
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
        ListenerPlans planner = new ListenerPlans(beans, environment, properties);
        try {
            List<ListenerPlan> wrapped = List.of();
            if (!methods.wrapped().isEmpty()) {
                if (!ClassUtils.isPresent("org.springframework.kafka.config.KafkaListenerEndpointRegistry",
                        getClass().getClassLoader())) {
                    throw new IllegalStateException("@Idempotent methods put Idem around spring-kafka listeners, but "
                            + "spring-kafka is not on the class path (add spring-boot-starter-kafka)");
                }
                wrapping = new KafkaListenerWrapping(beans, environment);
                wrapped = wrapping.plans(methods.wrapped(), planner);
            }
            for (ListenerPlan plan : planner.plans(methods, wrapped)) {
                if (wrapping != null && wrapping.wraps(plan)) {
                    wrapping.wrap(plan, processors.processor(plan), processors.kafkaSettings());
                    continue;
                }
                IdemConsumer consumer = consumer(plan, processors.processor(plan));
                consumer.start();
                running.add(new RunningListener(plan.name(), plan.broker(), plan.topic(), plan.group(), consumer,
                        plan.settings().getCloseTimeout()));
                LOG.info("Idem listener '{}' consumes {} as {} on {}{}", plan.name(), plan.topic(), plan.group(),
                        plan.broker(), processors.onLedger(plan) ? "" : " in Redis-only mode (no ledger)");
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
        stopped = true;
        try {
            CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).get(longest.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            LOG.warn("Idem listeners still running records after {}; the Redis client closes now and their claims "
                    + "lapse with their leases", longest);
        }
        if (wrapping != null) {
            wrapping.close(); // after spring-kafka's registry stopped their containers (a later phase)
        }
    }

    /** Before spring-kafka's listener registry ({@code Integer.MAX_VALUE - 100}): wrapped containers start wrapped and stop first. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }

    @Override
    public synchronized boolean isRunning() {
        return started && !stopped;
    }

    private IdemConsumer consumer(ListenerPlan plan, IdempotentProcessor.Builder<Object> processor) {
        try {
            return switch (plan.broker()) {
                case KAFKA -> ListenerConsumers.kafka(plan, processor, processors.kafkaSettings());
                case KAFKA_SHARE -> ListenerConsumers.kafkaShare(plan, processor, processors.kafkaSettings());
                case ROCKETMQ -> ListenerConsumers.rocketMq(plan, processor, processors.nameServer());
            };
        } catch (IllegalArgumentException e) {
            String origin = plan.broker() == Broker.ROCKETMQ ? "idem.rocketmq" : "idem.kafka";
            throw new IllegalStateException("Idem listener '" + plan.name() + "' (" + origin + ", idem.listeners."
                    + plan.name() + "): " + e.getMessage(), e);
        }
    }
}
