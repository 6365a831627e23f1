package dev.idem.spring.internal.kafka;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.kafka.KafkaRecordProcessor;
import dev.idem.spring.Idempotent;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerPlan;
import dev.idem.spring.internal.ListenerPlans;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.listener.MessageListenerContainer;

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
    public List<ListenerPlan> plans(List<ListenerMethods.Found<Idempotent>> methods, ListenerPlans plans) {
        KafkaListenerEndpointRegistry registry = beans.getBeanProvider(KafkaListenerEndpointRegistry.class).getIfUnique();
        List<ListenerPlan> planned = new ArrayList<>();
        for (ListenerMethods.Found<Idempotent> method : methods) {
            String where = method.method().getDeclaringClass().getName() + "." + method.method().getName();
            KafkaListener listener = AnnotatedElementUtils.findMergedAnnotation(method.method(), KafkaListener.class);
            if (listener == null) {
                throw new IllegalStateException("@Idempotent on " + where + " puts Idem around a spring-kafka "
                        + "@KafkaListener, but the method has none (for a listener of Idem's own, use @IdempotentListener)");
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
            check(found.getContainerProperties(), where);
            String group = found.getGroupId();
            if (group == null || group.isBlank()) {
                throw new IllegalStateException("@Idempotent on " + where + ": its @KafkaListener has no group "
                        + "(groupId, its id, or spring.kafka.consumer.group-id); Idem's keys are namespaced by it");
            }
            WrappedRecords records = new WrappedRecords(where);
            ListenerPlan plan = plans.wrappedPlan(method, id, topics(found.getContainerProperties()), group,
                    records.codec(), records);
            byName.put(plan.name(), new Found(found, records, where));
            planned.add(plan);
        }
        return planned;
    }

    /** Whether {@code plan} is a wrapped listener's. */
    public boolean wraps(ListenerPlan plan) {
        return byName.containsKey(plan.name());
    }

    /** Builds the listener's processor and puts Idem's listener and error handler into its container. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void wrap(ListenerPlan plan, IdempotentProcessor.Builder<Object> processor, Map<String, Object> kafka) {
        Found found = byName.get(plan.name());
        Map<String, Object> config = new HashMap<>(kafka);
        config.put("group.id", plan.group());
        config.remove("auto.offset.reset");
        KafkaRecordProcessor.Builder<Object> builder = KafkaRecordProcessor.builder(config, processor);
        if (!plan.deadLetterTopic().isBlank()) {
            builder.deadLetterRouting(DeadLetterRouting.fixed(plan.deadLetterTopic()));
        }
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

    /** Closes what Idem made for the wrapped listeners, after their containers stopped. */
    public void close() {
        for (AutoCloseable c : closing) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing an Idem wrapped listener's processor failed", e);
            }
        }
        closing.clear();
    }

    /** What would let spring-kafka commit or skip records Idem has not finished. */
    private static void check(ContainerProperties properties, String where) {
        ContainerProperties.AckMode mode = properties.getAckMode();
        if (mode == ContainerProperties.AckMode.MANUAL || mode == ContainerProperties.AckMode.MANUAL_IMMEDIATE) {
            throw new IllegalStateException("@Idempotent on " + where + ": its container's ack mode is " + mode
                    + "; Idem decides what is committed: use RECORD, BATCH (the default), TIME or COUNT "
                    + "(spring.kafka.listener.ack-mode)");
        }
        if (properties.isAsyncAcks()) {
            throw new IllegalStateException("@Idempotent on " + where + ": its container has async acks "
                    + "(spring.kafka.listener.async-acks); Idem commits in order: turn them off");
        }
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
