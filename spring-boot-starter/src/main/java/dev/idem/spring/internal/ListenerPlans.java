package dev.idem.spring.internal;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.spring.IdemProperties;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    /** Every listener found, resolved and checked, by name. */
    public List<ListenerPlan> plans(ListenerMethods methods) {
        Map<String, ListenerPlan> byName = new LinkedHashMap<>();
        for (ListenerMethods.Found<IdempotentListener> found : methods.listeners()) {
            ListenerPlan plan = plan(found);
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
        IdemProperties.Listener settings = properties.getListeners().getOrDefault(name, new IdemProperties.Listener());
        String prefix = "idem.listeners." + name + ".";
        Duration lease = settings.getLease() != null ? settings.getLease() : duration(resolve(a.lease()),
                "@IdempotentListener(lease) on " + where);
        String deadLetterTopic = settings.getDeadLetterTopic() != null ? settings.getDeadLetterTopic()
                : resolve(a.deadLetterTopic());
        int concurrency = settings.getConcurrency() != null ? settings.getConcurrency() : a.concurrency();
        if (concurrency < 0) {
            throw new IllegalStateException(prefix + "concurrency must be >= 0 but was " + concurrency);
        }
        Invoker invoker;
        try {
            invoker = new Invoker(found.bean(), found.method(), where);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        Compensation compensation = null;
        if (!Compensation.class.equals(a.compensation())) {
            compensation = beans.getBean(a.compensation());
        }
        return new ListenerPlan(name, where, a.broker(), topic, group, codec(invoker.payloadType()),
                keys(a, where, invoker.payloadType()), invoker, compensation, null,
                settings.getMaxAttempts() != null ? settings.getMaxAttempts() : a.maxAttempts(), lease, deadLetterTopic,
                concurrency, a.ledger(), settings);
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

    private KeySource<Object> keys(IdempotentListener a, String where, Class<?> payloadType) {
        String key = resolve(a.key());
        String suffix = resolve(a.keySuffix());
        KeySource<Object> source = switch (a.keySource()) {
            case MESSAGE_KEY -> KeySource.messageKey();
            case MESSAGE_ID -> KeySource.messageId();
            case HEADER -> {
                if (key.isBlank()) {
                    throw new IllegalStateException("@IdempotentListener on " + where
                            + ": keySource = HEADER needs key = \"<header name>\"");
                }
                yield KeySource.header(key);
            }
            case PROPERTY -> {
                if (key.isBlank()) {
                    throw new IllegalStateException("@IdempotentListener on " + where + " needs key = \"<property of "
                            + payloadType.getSimpleName() + ">\" (or another keySource)");
                }
                try {
                    yield PropertyPath.of(payloadType, key);
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("@IdempotentListener on " + where + ": " + e.getMessage(), e);
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
