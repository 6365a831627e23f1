package dev.idem.spring.internal;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.spring.Broker;
import dev.idem.spring.IdemProperties;
import dev.idem.spring.Idempotent;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import dev.idem.spring.KeyFrom;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.env.Environment;

/**
 * Resolves every {@code @IdempotentListener} method into a {@link ListenerPlan} before anything starts:
 * placeholders, properties over annotation values, the payload's codec and key, the compensation. A
 * wrong or missing setting fails start-up with an {@link IllegalStateException} naming it.
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
    public List<ListenerPlan> plans(ListenerMethods methods, List<ListenerPlan> wrapped) {
        Map<String, ListenerPlan> byName = new LinkedHashMap<>();
        List<ListenerPlan> all = new java.util.ArrayList<>();
        for (ListenerMethods.Found<IdempotentListener> found : methods.listeners()) {
            all.add(plan(found));
        }
        all.addAll(wrapped);
        for (ListenerPlan plan : all) {
            ListenerPlan other = byName.putIfAbsent(plan.name(), plan);
            if (other != null) {
                throw new IllegalStateException("two Idem listeners are named '" + plan.name() + "': " + other.where()
                        + " and " + plan.where() + "; give one a different name");
            }
        }
        for (ListenerMethods.Found<IdempotentCompensation> found : methods.compensations()) {
            String listener = environment.resolveRequiredPlaceholders(found.annotation().value());
            String where = describe(found.method());
            ListenerPlan plan = byName.get(listener);
            if (plan == null) {
                throw new IllegalStateException("@IdempotentCompensation(\"" + listener + "\") on " + where
                        + " names no listener; listeners are " + byName.keySet());
            }
            if (plan.compensation() != null || plan.compensationHook() != null) {
                throw new IllegalStateException("listener '" + listener + "' has two compensations: " + where
                        + " and another");
            }
            Class<?>[] types = found.method().getParameterTypes();
            if (types.length != 1 || !DeadLetter.class.equals(types[0])) {
                throw new IllegalStateException("@IdempotentCompensation method " + where
                        + " must take one dev.idem.core.DeadLetter parameter");
            }
            byName.put(listener, plan.withHook(new CompensationHook(found.bean(), found.method())));
        }
        for (String name : properties.getListeners().keySet()) {
            if (!byName.containsKey(name)) {
                throw new IllegalStateException("idem.listeners." + name + " names no listener; listeners are "
                        + byName.keySet());
            }
        }
        return List.copyOf(byName.values());
    }

    private ListenerPlan plan(ListenerMethods.Found<IdempotentListener> found) {
        IdempotentListener a = found.annotation();
        String where = describe(found.method());
        String topic = resolve(a.topic());
        String group = resolve(a.group());
        if (topic.isBlank() || group.isBlank()) {
            throw new IllegalStateException("@IdempotentListener on " + where + " needs a topic and a group");
        }
        String name = a.name().isBlank() ? group + "-" + topic : resolve(a.name());
        IdemProperties.Listener settings = settings(name);
        int concurrency = settings.getConcurrency() != null ? settings.getConcurrency() : a.concurrency();
        if (concurrency < 0) {
            throw new IllegalStateException("idem.listeners." + name + ".concurrency must be >= 0 but was "
                    + concurrency);
        }
        Invoker invoker;
        try {
            invoker = new Invoker(found.bean(), found.method(), where);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        String what = "@IdempotentListener";
        return new ListenerPlan(name, where, a.broker(), topic, group, codec(invoker.payloadType()),
                keys(a.keySource(), a.key(), a.keySuffix(), what + " on " + where, invoker.payloadType()), invoker,
                compensation(a.compensation()), null,
                settings.getMaxAttempts() != null ? settings.getMaxAttempts() : a.maxAttempts(),
                lease(settings, a.lease(), what, where), deadLetterTopic(settings, a.deadLetterTopic()), concurrency,
                a.ledger(), settings);
    }

    /**
     * The plan of a framework's listener Idem wraps (spring-kafka's, rocketmq-spring's): its topic and
     * group are its container's, its payload the message's bytes (or its defect, through {@code codec}),
     * {@code call} runs it.
     */
    public ListenerPlan wrappedPlan(ListenerMethods.Found<Idempotent> found, Broker broker, String defaultName,
                                    String topic, String group, PayloadCodec<Object> codec, ListenerCall call) {
        Idempotent a = found.annotation();
        String where = describe(found.method());
        String name = a.name().isBlank() ? defaultName : resolve(a.name());
        IdemProperties.Listener settings = settings(name);
        if (settings.getConcurrency() != null) {
            throw new IllegalStateException("idem.listeners." + name + ".concurrency is not a setting of a wrapped "
                    + "listener: its threads are its container's (@KafkaListener's concurrency, "
                    + "@RocketMQMessageListener's consumeThreadNumber)");
        }
        if (a.keySource() == KeyFrom.PROPERTY) {
            throw new IllegalStateException("@Idempotent on " + where + ": keySource PROPERTY is for "
                    + "@IdempotentListener; use MESSAGE_KEY, HEADER or MESSAGE_ID");
        }
        String what = "@Idempotent";
        return new ListenerPlan(name, where, broker, topic, group, codec,
                keys(a.keySource(), a.key(), a.keySuffix(), what + " on " + where, byte[].class), call,
                compensation(a.compensation()), null,
                settings.getMaxAttempts() != null ? settings.getMaxAttempts() : a.maxAttempts(),
                lease(settings, a.lease(), what, where), deadLetterTopic(settings, a.deadLetterTopic()), 0, a.ledger(),
                settings);
    }

    private IdemProperties.Listener settings(String name) {
        return properties.getListeners().getOrDefault(name, new IdemProperties.Listener());
    }

    private Duration lease(IdemProperties.Listener settings, String annotated, String what, String where) {
        return settings.getLease() != null ? settings.getLease()
                : duration(resolve(annotated), what + "(lease) on " + where);
    }

    private String deadLetterTopic(IdemProperties.Listener settings, String annotated) {
        return settings.getDeadLetterTopic() != null ? settings.getDeadLetterTopic() : resolve(annotated);
    }

    private @Nullable Compensation compensation(Class<? extends Compensation> type) {
        return Compensation.class.equals(type) ? null : beans.getBean(type);
    }

    private String resolve(String value) {
        return environment.resolveRequiredPlaceholders(value);
    }

    private static Duration duration(String value, String where) {
        try {
            return DurationStyle.detectAndParse(value);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new IllegalStateException(where + " must be a duration like 30s, 500ms, 2m or PT30S but was '"
                    + value + "'", e);
        }
    }

    @SuppressWarnings("unchecked")
    private static PayloadCodec<Object> codec(Class<?> type) {
        if (String.class.equals(type)) {
            return (PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.utf8();
        }
        if (byte[].class.equals(type)) {
            return (PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.bytes();
        }
        return (PayloadCodec<Object>) PayloadCodec.json(type);
    }

    private KeySource<Object> keys(KeyFrom from, String annotatedKey, String annotatedSuffix, String where,
                                   Class<?> payloadType) {
        String key = resolve(annotatedKey);
        String suffix = resolve(annotatedSuffix);
        KeySource<Object> source = switch (from) {
            case MESSAGE_KEY -> KeySource.messageKey();
            case MESSAGE_ID -> KeySource.messageId();
            case HEADER -> {
                if (key.isBlank()) {
                    throw new IllegalStateException(where + ": keySource = HEADER needs key = \"<header name>\"");
                }
                yield KeySource.header(key);
            }
            case PROPERTY -> {
                if (key.isBlank()) {
                    throw new IllegalStateException(where + " needs key = \"<property of "
                            + payloadType.getSimpleName() + ">\" (or another keySource)");
                }
                try {
                    yield PropertyPath.of(payloadType, key);
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(where + ": " + e.getMessage(), e);
                }
            }
        };
        if (suffix.isEmpty()) {
            return source;
        }
        return (envelope, payload) -> {
            String value = source.keyOf(envelope, payload);
            return value == null ? null : value + suffix;
        };
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName();
    }
}
