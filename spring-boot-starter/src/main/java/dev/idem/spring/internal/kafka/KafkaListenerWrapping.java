package dev.idem.spring.internal.kafka;

import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.KafkaRecordProcessor;
import dev.idem.listener.ListenerProcessors;
import dev.idem.listener.ListenerSpec;
import dev.idem.spring.Broker;
import dev.idem.spring.Idempotent;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerPlans;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.listener.adapter.AsyncRepliesAware;
import org.springframework.util.ReflectionUtils;

/**
 * Puts Idem around the spring-kafka containers of {@link Idempotent} methods before the listener
 * registry starts them: finds each container by its {@code @KafkaListener} id, refuses what would let
 * spring-kafka commit or skip behind Idem's back, and sets Idem's listener and error handler in.
 * Loaded only when an application has {@code @Idempotent} methods (and so spring-kafka).
 */
public final class KafkaListenerWrapping {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaListenerWrapping.class);

    /** A container found for a wrapped method, and what Idem runs its records with. */
    private record Found(AbstractMessageListenerContainer<?, ?> container, WrappedRecords records, String where) {
    }

    private final ListableBeanFactory beans;
    private final Environment environment;
    private final Map<String, Found> byName = new LinkedHashMap<>();
    private final List<AutoCloseable> closing = new ArrayList<>();

    public KafkaListenerWrapping(ListableBeanFactory beans, Environment environment) {
        this.beans = beans;
        this.environment = environment;
    }

    /** Each wrapped method's plan, its container found and checked; nothing is changed yet. */
    public List<ListenerSpec> plans(List<ListenerMethods.Found<Idempotent>> methods, ListenerPlans plans) {
        KafkaListenerEndpointRegistry registry = beans.getBeanProvider(KafkaListenerEndpointRegistry.class).getIfUnique();
        List<ListenerSpec> planned = new ArrayList<>();
        for (ListenerMethods.Found<Idempotent> method : methods) {
            String where = method.method().getDeclaringClass().getName() + "." + method.method().getName();
            KafkaListener listener = AnnotatedElementUtils.findMergedAnnotation(method.method(), KafkaListener.class);
            if (listener == null) {
                throw new IllegalStateException("@Idempotent on " + where + " puts Idem around a spring-kafka "
                        + "@KafkaListener, but the method has none (for a listener of Idem's own, use @IdempotentListener)");
            }
            if (AnnotatedElementUtils.findMergedRepeatableAnnotations(method.method(), KafkaListener.class).size() > 1) {
                throw new IllegalStateException("@Idempotent on " + where + ": the method has several @KafkaListener "
                        + "annotations; Idem wraps one: give each its own method");
            }
            if (!listener.errorHandler().isBlank()) {
                throw new IllegalStateException("@Idempotent on " + where + ": its @KafkaListener has errorHandler = \""
                        + listener.errorHandler() + "\", which would take the method's failures from Idem (no retry "
                        + "count, no dead letter): remove it");
            }
            String id = environment.resolveRequiredPlaceholders(listener.id());
            if (id.isBlank()) {
                throw new IllegalStateException("@Idempotent on " + where + " needs @KafkaListener(id = \"...\"): Idem "
                        + "finds the listener's container by it, and it is the listener's default name");
            }
            MessageListenerContainer container = registry == null ? null : registry.getListenerContainer(id);
            if (!(container instanceof AbstractMessageListenerContainer<?, ?> found)) {
                throw new IllegalStateException("@Idempotent on " + where + ": no spring-kafka listener container '"
                        + id + "' (" + (container == null ? "none registered" : container.getClass().getName()) + ")");
            }
            check(found, where);
            String group = found.getGroupId();
            if (group == null || group.isBlank()) {
                throw new IllegalStateException("@Idempotent on " + where + ": its @KafkaListener has no group "
                        + "(groupId, its id, or spring.kafka.consumer.group-id); Idem's keys are namespaced by it");
            }
            WrappedRecords records = new WrappedRecords(where);
            ListenerSpec plan = plans.wrappedPlan(method, Broker.KAFKA, id, topics(found.getContainerProperties()),
                    group, records.codec(), records);
            byName.put(plan.name(), new Found(found, records, where));
            planned.add(plan);
        }
        return planned;
    }

    /** Whether {@code plan} is a wrapped listener's. */
    public boolean wraps(ListenerSpec plan) {
        return byName.containsKey(plan.name());
    }

    /** Builds the listener's processor and puts Idem's listener and error handler into its container. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void wrap(ListenerSpec plan, IdempotentProcessor.Builder<Object> processor, Map<String, Object> kafka) {
        Found found = Objects.requireNonNull(byName.get(plan.name()), "a listener this wraps");
        Map<String, Object> config = new HashMap<>(kafka);
        config.put("group.id", plan.group());
        config.remove("auto.offset.reset");
        KafkaRecordProcessor.Builder<Object> builder = KafkaRecordProcessor.builder(config, processor);
        ListenerProcessors.deadLetterRouting(plan).ifPresent(builder::deadLetterRouting);
        KafkaRecordProcessor<Object> built;
        try {
            built = builder.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Idem listener '" + plan.name() + "' (idem.kafka, spring.kafka, "
                    + "idem.listeners." + plan.name() + "): " + e.getMessage(), e);
        }
        closing.add(built);
        found.records.use(built);
        AbstractMessageListenerContainer container = found.container;
        Object listener = container.getContainerProperties().getMessageListener();
        if (listener instanceof BatchMessageListener<?, ?> batch) {
            container.setupMessageListener(new IdemBatchListener<>(batch, plan.name(), found.records));
        } else if (listener instanceof MessageListener<?, ?> record) {
            container.setupMessageListener(new IdemRecordListener<>(record, plan.name(), found.records));
        } else {
            throw new IllegalStateException("@Idempotent on " + found.where + ": the container's listener is a "
                    + (listener == null ? "null" : listener.getClass().getName()) + ", not a record or batch listener");
        }
        if (container.getCommonErrorHandler() != null) {
            LOG.info("Idem listener '{}': Idem's error handler replaces {} on its container (Idem decides "
                    + "redelivery and dead letters)", plan.name(), container.getCommonErrorHandler().getClass().getName());
        }
        IdemErrorHandler errors = new IdemErrorHandler(plan.name(), found.records);
        closing.add(errors::close);
        container.setCommonErrorHandler(errors);
        LOG.info("Idem wraps @KafkaListener {} as '{}' (group {}, {} listener)", found.where, plan.name(), plan.group(),
                listener instanceof BatchMessageListener<?, ?> ? "batch" : "record");
    }

    /**
     * Closes what Idem made for the wrapped listeners once their containers have stopped (waiting up to
     * {@code grace} for a container whose stop outran its phase's timeout: its handler still needs the
     * lease renewal and Redis).
     */
    public void close(java.time.Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        for (Found found : byName.values()) {
            while ((found.container.isRunning() || found.container.isChildRunning()) && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        for (AutoCloseable c : closing) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing an Idem wrapped listener's processor failed", e);
            }
        }
        closing.clear();
    }

    /** What would let spring-kafka (or the Kafka client) commit or skip records Idem has not finished. */
    private static void check(AbstractMessageListenerContainer<?, ?> container, String where) {
        ContainerProperties properties = container.getContainerProperties();
        ContainerProperties.AckMode mode = properties.getAckMode();
        if (mode != ContainerProperties.AckMode.RECORD && mode != ContainerProperties.AckMode.BATCH) {
            throw new IllegalStateException("@Idempotent on " + where + ": its container's ack mode is " + mode
                    + "; Idem decides what is committed: use RECORD or BATCH (the default) "
                    + "(spring.kafka.listener.ack-mode)");
        }
        if (properties.isAsyncAcks()) {
            throw new IllegalStateException("@Idempotent on " + where + ": its container has async acks "
                    + "(spring.kafka.listener.async-acks); Idem commits in order: turn them off");
        }
        if (properties.getKafkaAwareTransactionManager() != null || properties.getTransactionManager() != null) {
            throw new IllegalStateException("@Idempotent on " + where + ": its container has a transaction manager "
                    + "(spring.kafka.producer.transaction-id-prefix), which commits offsets of records Idem asked to "
                    + "redeliver; Idem's ledger is the transaction: use a container factory without one");
        }
        Object listener = properties.getMessageListener();
        if (listener instanceof AsyncRepliesAware async && async.isAsyncReplies()) {
            throw new IllegalStateException("@Idempotent on " + where + ": the method returns a future (or Mono, or "
                    + "is a suspend function); Idem needs the effect done when the method returns");
        }
        if (autoCommit(container)) {
            throw new IllegalStateException("@Idempotent on " + where + ": its consumer has enable.auto.commit=true "
                    + "(spring.kafka.consumer.enable-auto-commit), which commits records Idem has not finished: "
                    + "turn it off");
        }
    }

    /** Whether the container's consumer would commit by itself: its own properties, then its factory's. */
    private static boolean autoCommit(AbstractMessageListenerContainer<?, ?> container) {
        Object value = container.getContainerProperties().getKafkaConsumerProperties()
                .getProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
        if (value == null) {
            java.lang.reflect.Field field = ReflectionUtils.findField(AbstractMessageListenerContainer.class,
                    "consumerFactory");
            if (field != null) {
                ReflectionUtils.makeAccessible(field);
                Object factory = ReflectionUtils.getField(field, container);
                if (factory instanceof ConsumerFactory<?, ?> consumers) {
                    value = consumers.getConfigurationProperties().get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
                }
            }
        }
        return value != null && Boolean.parseBoolean(value.toString());
    }

    private static String topics(ContainerProperties properties) {
        if (properties.getTopics() != null && properties.getTopics().length > 0) {
            return String.join(",", properties.getTopics());
        }
        if (properties.getTopicPattern() != null) {
            return properties.getTopicPattern().pattern();
        }
        return properties.getTopicPartitions() == null ? "" : Arrays.toString(properties.getTopicPartitions());
    }
}
