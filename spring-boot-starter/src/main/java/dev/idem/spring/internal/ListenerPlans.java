package dev.idem.spring.internal;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.listener.ListenerBroker;
import dev.idem.listener.ListenerHandler;
import dev.idem.listener.ListenerPayloads;
import dev.idem.listener.ListenerSpec;
import dev.idem.spring.Broker;
import dev.idem.spring.IdemListenerProperties;
import dev.idem.spring.IdemProperties;
import dev.idem.spring.Idempotent;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import dev.idem.spring.KeyFrom;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;

/**
 * Resolves every {@code @IdempotentListener} and {@code @Idempotent} method into a {@link ListenerSpec}
 * before anything starts: placeholders, {@code idem.listeners.<name>.*} over annotation values, the
 * payload's codec and key, the compensation. A wrong or missing setting fails start-up with an
 * {@link IllegalStateException} naming it.
 */
public final class ListenerPlans {

    private final BeanFactory beans;
    private final Environment environment;
    private final IdemProperties properties;

    public ListenerPlans(BeanFactory beans, Environment environment, IdemProperties properties) {
        this.beans = beans;
        this.environment = environment;
        this.properties = properties;
    }

    /**
     * Every listener found, resolved and checked, by name: the annotated methods' and {@code wrapped}
     * (the spring-kafka listeners Idem wraps, planned by {@link #wrappedPlan}), with their compensations.
     */
    public List<ListenerSpec> plans(ListenerMethods methods, List<ListenerSpec> wrapped) {
        Map<String, ListenerSpec> byName = new LinkedHashMap<>();
        List<ListenerSpec> all = new java.util.ArrayList<>();
        for (ListenerMethods.Found<IdempotentListener> found : methods.listeners()) {
            all.add(plan(found));
        }
        all.addAll(wrapped);
        for (ListenerSpec plan : all) {
            ListenerSpec other = byName.putIfAbsent(plan.name(), plan);
            if (other != null) {
                throw new IllegalStateException("two Idem listeners are named '" + plan.name() + "': " + other.where()
                        + " and " + plan.where() + "; give one a different name");
            }
        }
        for (ListenerMethods.Found<IdempotentCompensation> found : methods.compensations()) {
            String listener = environment.resolveRequiredPlaceholders(found.annotation().value());
            String where = describe(found.method());
            ListenerSpec plan = byName.get(listener);
            if (plan == null) {
                throw new IllegalStateException("@IdempotentCompensation(\"" + listener + "\") on " + where
                        + " names no listener; listeners are " + byName.keySet());
            }
            if (plan.compensation() != null) {
                throw new IllegalStateException("listener '" + listener + "' has two compensations: " + where
                        + " and another");
            }
            Class<?>[] types = found.method().getParameterTypes();
            if (types.length != 1 || !DeadLetter.class.equals(types[0])) {
                throw new IllegalStateException("@IdempotentCompensation method " + where
                        + " must take one dev.idem.core.DeadLetter parameter");
            }
            byName.put(listener, plan.withCompensation(new CompensationHook(found.bean(), found.method())::compensate));
        }
        for (String name : properties.getListeners().keySet()) {
            if (!byName.containsKey(name)) {
                throw new IllegalStateException("idem.listeners." + name + " names no listener; listeners are "
                        + byName.keySet());
            }
        }
        return List.copyOf(byName.values());
    }

    private ListenerSpec plan(ListenerMethods.Found<IdempotentListener> found) {
        IdempotentListener a = found.annotation();
        String where = describe(found.method());
        String topic = resolve(a.topic());
        String group = resolve(a.group());
        if (topic.isBlank() || group.isBlank()) {
            throw new IllegalStateException("@IdempotentListener on " + where + " needs a topic and a group");
        }
        String name = a.name().isBlank() ? group + "-" + topic : resolve(a.name());
        Invoker invoker;
        try {
            invoker = new Invoker(found.bean(), found.method(), where);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        String what = "@IdempotentListener";
        Class<?> payload = invoker.payloadType();
        try {
            ListenerSpec.Builder spec = ListenerSpec.builder(name, where, ListenerBroker.valueOf(a.broker().name()))
                    .topic(topic).group(group).handler(invoker).ledger(a.ledger())
                    .codec(ListenerPayloads.plainCodec(payload).orElseGet(() -> PayloadCodec.json(cast(payload))))
                    .keys(ListenerPayloads.keys(a.keySource(), resolve(a.key()), resolve(a.keySuffix()),
                            what + " on " + where, payload.getSimpleName(), path -> property(payload, path, what + " on " + where)))
                    .compensation(compensation(a.compensation()));
            return configured(spec.annotated(what, member(a)), name).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * The plan of a framework's listener Idem wraps (spring-kafka's, rocketmq-spring's): its topic and
     * group are its container's, its payload the message's bytes (or its defect, through {@code codec}),
     * {@code call} runs it.
     */
    public ListenerSpec wrappedPlan(ListenerMethods.Found<Idempotent> found, Broker broker, String defaultName,
                                    String topic, String group, PayloadCodec<Object> codec, ListenerHandler call) {
        Idempotent a = found.annotation();
        String where = describe(found.method());
        String name = a.name().isBlank() ? defaultName : resolve(a.name());
        if (a.keySource() == KeyFrom.PROPERTY) {
            throw new IllegalStateException("@Idempotent on " + where + ": keySource PROPERTY is for "
                    + "@IdempotentListener; use MESSAGE_KEY, HEADER, MESSAGE_ID or OUTBOX_ID");
        }
        String what = "@Idempotent";
        try {
            ListenerSpec.Builder spec = ListenerSpec.builder(name, where, ListenerBroker.valueOf(broker.name()))
                    .wrapped("its threads are its container's: @KafkaListener's concurrency, "
                            + "@RocketMQMessageListener's consumeThreadNumber")
                    .topic(topic).group(group).handler(call).ledger(a.ledger()).codec(codec)
                    .keys(ListenerPayloads.keys(a.keySource(), resolve(a.key()), resolve(a.keySuffix()),
                            what + " on " + where, "byte[]", path -> {
                                throw new IllegalArgumentException(where + ": no property of the bytes");
                            }))
                    .compensation(compensation(a.compensation()));
            return configured(spec.annotated(what, member(a)), name).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** The listener's section of {@code idem.listeners}, over what its annotation set. */
    private ListenerSpec.Builder configured(ListenerSpec.Builder spec, String name) {
        IdemListenerProperties section = properties.getListeners().get(name);
        if (section == null) {
            return spec;
        }
        BeanWrapper bound = new BeanWrapperImpl(section);
        return spec.configuredValues(setting -> Optional.ofNullable(bound.getPropertyValue(setting.member())));
    }

    /** The annotation's members by name, placeholders resolved. */
    private Function<String, Optional<String>> member(Annotation annotation) {
        Map<String, Object> members = AnnotationUtils.getAnnotationAttributes(annotation);
        return member -> Optional.ofNullable(members.get(member)).map(value -> resolve(String.valueOf(value)));
    }

    private @Nullable Compensation compensation(Class<? extends Compensation> type) {
        return Compensation.class.equals(type) ? null : beans.getBean(type);
    }

    private String resolve(String value) {
        return environment.resolveRequiredPlaceholders(value);
    }

    private static KeySource<Object> property(Class<?> payload, String path, String where) {
        try {
            return PropertyPath.of(payload, path);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Class<Object> cast(Class<?> type) {
        return (Class<Object>) type;
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName();
    }
}
