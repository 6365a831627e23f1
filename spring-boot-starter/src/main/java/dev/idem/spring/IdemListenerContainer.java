package dev.idem.spring;

import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.listener.ListenerConsumers;
import dev.idem.listener.ListenerSetting;
import dev.idem.listener.ListenerSpec;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerPlans;
import dev.idem.spring.internal.ListenerProcessors;
import dev.idem.spring.internal.kafka.KafkaListenerWrapping;
import dev.idem.spring.internal.rocketmq.RocketMqListenerWrapping;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.annotation.MergedAnnotations;
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
    private @Nullable KafkaListenerWrapping kafkaWrapping;
    private @Nullable RocketMqListenerWrapping rocketMqWrapping;
    private Duration wrappedGrace = Duration.ZERO;
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
        if (stopped) {
            // The wrapped containers' processors are closed: they would restart on nothing.
            throw new IllegalStateException("Idem's listeners do not restart after a stop; close the context and "
                    + "start a new one");
        }
        if (started) {
            return;
        }
        started = true;
        ListenerPlans planner = new ListenerPlans(beans, environment, properties);
        try {
            List<ListenerSpec> wrapped = new ArrayList<>();
            List<ListenerMethods.Found<Idempotent>> kafkaMethods = new ArrayList<>();
            List<ListenerMethods.Found<Idempotent>> rocketMqMethods = new ArrayList<>();
            for (ListenerMethods.Found<Idempotent> found : methods.wrapped()) {
                (ROCKETMQ_LISTENER.isPresentOn(found) ? rocketMqMethods : kafkaMethods).add(found);
            }
            if (!kafkaMethods.isEmpty()) {
                requireClass(KAFKA_REGISTRY, "spring-kafka (spring-boot-starter-kafka)");
                kafkaWrapping = new KafkaListenerWrapping(beans, environment);
                wrapped.addAll(kafkaWrapping.plans(kafkaMethods, planner));
            }
            if (!rocketMqMethods.isEmpty()) {
                rocketMqWrapping = new RocketMqListenerWrapping(beans);
                wrapped.addAll(rocketMqWrapping.plans(rocketMqMethods, planner));
            }
            for (ListenerSpec plan : planner.plans(methods, wrapped)) {
                if (kafkaWrapping != null && kafkaWrapping.wraps(plan)) {
                    Duration closeTimeout = closeTimeout(plan);
                    wrappedGrace = closeTimeout.compareTo(wrappedGrace) > 0 ? closeTimeout : wrappedGrace;
                    kafkaWrapping.wrap(plan, processors.processor(plan), processors.kafkaSettings());
                    continue;
                }
                if (rocketMqWrapping != null && rocketMqWrapping.wraps(plan)) {
                    rocketMqWrapping.wrap(plan, processors.processor(plan));
                    continue;
                }
                IdemConsumer consumer = consumer(plan, processors.processor(plan));
                consumer.start();
                running.add(new RunningListener(plan.name(), Broker.valueOf(plan.broker().name()), plan.topic(),
                        plan.group(), consumer, closeTimeout(plan)));
                LOG.info("Idem listener '{}' consumes {} as {} on {}{}", plan.name(), plan.topic(), plan.group(),
                        plan.broker(), processors.onLedger(plan) ? " on the ledger" : " in Redis-only mode (no ledger)");
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
        // After the wrapped containers stopped (a later phase each): their processors, then their producers.
        if (kafkaWrapping != null) {
            kafkaWrapping.close(wrappedGrace);
        }
        if (rocketMqWrapping != null) {
            rocketMqWrapping.close();
        }
    }

    /**
     * Before the containers Idem wraps start (spring-kafka's registry: {@code Integer.MAX_VALUE - 100};
     * rocketmq-spring's: {@code - 2000}), so they start wrapped, and after they stop.
     */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 3000;
    }

    private static void requireClass(String name, String what) {
        if (!ClassUtils.isPresent(name, IdemListenerContainer.class.getClassLoader())) {
            throw new IllegalStateException("@Idempotent methods of this kind put Idem around " + what
                    + " listeners, but it is not on the class path");
        }
    }

    /** An annotation found by name, so that a framework that is absent is never loaded. */
    private record AnnotationName(String name) {
        boolean isPresentOn(ListenerMethods.Found<?> found) {
            return MergedAnnotations.from(AopUtils.getTargetClass(found.bean()),
                    MergedAnnotations.SearchStrategy.TYPE_HIERARCHY).isPresent(name);
        }
    }

    private static final String KAFKA_REGISTRY = "org.springframework.kafka.config.KafkaListenerEndpointRegistry";
    private static final AnnotationName ROCKETMQ_LISTENER =
            new AnnotationName("org.apache.rocketmq.spring.annotation.RocketMQMessageListener");

    @Override
    public synchronized boolean isRunning() {
        return started && !stopped;
    }

    private IdemConsumer consumer(ListenerSpec plan, IdempotentProcessor.Builder<Object> processor) {
        try {
            return switch (plan.broker()) {
                case KAFKA -> ListenerConsumers.kafka(plan, processor, processors.kafkaSettings());
                case KAFKA_SHARE -> ListenerConsumers.kafkaShare(plan, processor, processors.kafkaSettings());
                case ROCKETMQ -> ListenerConsumers.rocketMq(plan, processor, processors.nameServer());
            };
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static Duration closeTimeout(ListenerSpec plan) {
        return plan.get(ListenerSetting.CLOSE_TIMEOUT).orElse(IdemConsumer.DEFAULT_CLOSE_TIMEOUT);
    }
}
