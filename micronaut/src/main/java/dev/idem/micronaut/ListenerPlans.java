package dev.idem.micronaut;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.micronaut.internal.BrokerOptions;
import dev.idem.micronaut.internal.ProcessorSettings;
import dev.idem.micronaut.internal.Settings;
import io.micronaut.context.BeanContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.annotation.AnnotationMetadata;
import io.micronaut.core.beans.BeanIntrospection;
import io.micronaut.core.beans.BeanIntrospector;
import io.micronaut.core.beans.BeanProperty;
import io.micronaut.core.type.Argument;
import io.micronaut.core.util.StringUtils;
import io.micronaut.inject.ExecutableMethod;
import io.micronaut.json.JsonMapper;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Resolves every {@link IdempotentListener} method into a plan (its broker, topic, group, key,
 * codec, compensation and settings) against its annotation and the configuration, before anything
 * starts: a wrong or missing setting fails start-up with a {@link ConfigurationException} naming it.
 */
final class ListenerPlans {

    static final Set<String> LISTENER_KEYS = IdemListeners.union(IdemListeners.union(Set.of("max-attempts", "lease",
            "dead-letter-topic", "concurrency", "close-timeout"), ProcessorSettings.KEYS),
            IdemListeners.union(BrokerOptions.KAFKA_KEYS, BrokerOptions.ROCKETMQ_KEYS));

    private final BeanContext context;
    private final Environment environment;
    private final Settings properties;
    private final IdemListenerRegistry registry;

    ListenerPlans(BeanContext context, Environment environment, Settings properties, IdemListenerRegistry registry) {
        this.context = context;
        this.environment = environment;
        this.properties = properties;
        this.registry = registry;
    }

    /** One listener, resolved against the annotation and configuration. */
    static final class Plan {
        String name;
        String method;
        Broker broker;
        String topic;
        String group;
        KeySource<Object> keys;
        Compensation compensation;
        int maxAttempts;
        Duration lease;
        Duration closeTimeout;
        String deadLetterTopic;
        int concurrency;
        boolean ledger;
        PayloadCodec<Object> codec;
        Invoker invoker;
        ProcessorSettings settings;
        BrokerOptions brokerOptions;
    }

    /** Every listener found, resolved and checked; two with one name are refused. */
    List<Plan> plans() {
        Map<String, Plan> byName = new LinkedHashMap<>();
        Map<String, String> wrapped = registry.wrapped();
        for (IdemListenerRegistry.Found found : registry.listeners()) {
            Plan plan = plan(found);
            Plan other = byName.putIfAbsent(plan.name, plan);
            String otherMethod = other != null ? other.method : wrapped.get(plan.name);
            if (otherMethod != null) {
                throw new ConfigurationException("two Idem listeners are named '" + plan.name + "': " + otherMethod
                        + " and " + plan.method + "; give one a different name");
            }
        }
        for (IdemListenerRegistry.Found found : registry.compensations()) {
            String listener = found.method().stringValue(IdempotentCompensation.class).orElse("");
            String where = describe(found.method());
            Plan plan = byName.get(listener);
            if (plan == null) {
                throw new ConfigurationException("@IdempotentCompensation(\"" + listener + "\") on " + where
                        + " names no listener; listeners are " + byName.keySet());
            }
            if (plan.compensation != null) {
                throw new ConfigurationException("listener '" + listener + "' has two compensations: " + where
                        + " and the one on its @IdempotentListener");
            }
            Argument<?>[] args = found.method().getArguments();
            if (args.length != 1 || !DeadLetter.class.equals(args[0].getType())) {
                throw new ConfigurationException("@IdempotentCompensation method " + where
                        + " must take one dev.idem.core.DeadLetter parameter");
            }
            @SuppressWarnings("unchecked")
            ExecutableMethod<Object, Object> method = (ExecutableMethod<Object, Object>) found.method();
            Object bean = context.getBean(found.bean());
            plan.compensation = deadLetter -> method.invoke(bean, deadLetter);
        }
        Collection<String> configured = environment.getPropertyEntries("idem.listeners");
        for (String name : configured) {
            if (!byName.containsKey(name) && !wrapped.containsKey(name)) {
                Set<String> names = new TreeSet<>(byName.keySet());
                names.addAll(wrapped.keySet());
                throw new ConfigurationException("idem.listeners." + name + " names no listener; listeners are "
                        + names);
            }
        }
        return List.copyOf(byName.values());
    }

    private Plan plan(IdemListenerRegistry.Found found) {
        @SuppressWarnings("unchecked")
        ExecutableMethod<Object, Object> method = (ExecutableMethod<Object, Object>) found.method();
        AnnotationMetadata a = method.getAnnotationMetadata();
        Plan plan = new Plan();
        plan.method = describe(method);
        plan.topic = properties.annotationText(a, IdempotentListener.class, "topic").orElse("");
        plan.group = properties.annotationText(a, IdempotentListener.class, "group").orElse("");
        if (plan.topic.isBlank() || plan.group.isBlank()) {
            throw new ConfigurationException("@IdempotentListener on " + plan.method + " needs a topic and a group");
        }
        plan.name = properties.annotationText(a, IdempotentListener.class, "name").filter(StringUtils::hasText)
                .orElse(plan.group + "-" + plan.topic);
        plan.broker = a.enumValue(IdempotentListener.class, "broker", Broker.class).orElse(Broker.KAFKA);
        String prefix = "idem.listeners." + plan.name + ".";
        properties.checkKeys("idem.listeners." + plan.name, LISTENER_KEYS, "an Idem setting");
        plan.maxAttempts = properties.intSetting(prefix + "max-attempts",
                a.intValue(IdempotentListener.class, "maxAttempts").orElse(5));
        plan.lease = properties.durationSetting(prefix + "lease", properties.annotationText(a, IdempotentListener.class, "lease").orElse("30s"),
                "@IdempotentListener(lease) on " + plan.method);
        plan.deadLetterTopic = environment.getProperty(prefix + "dead-letter-topic", String.class)
                .orElse(properties.annotationText(a, IdempotentListener.class, "deadLetterTopic").orElse(""));
        plan.closeTimeout = properties.durationSetting(prefix + "close-timeout", "30s", prefix + "close-timeout");
        plan.concurrency = properties.intSetting(prefix + "concurrency",
                a.intValue(IdempotentListener.class, "concurrency").orElse(0));
        if (plan.concurrency < 0) {
            throw new ConfigurationException(prefix + "concurrency must be >= 0 but was " + plan.concurrency);
        }
        plan.ledger = a.booleanValue(IdempotentListener.class, "ledger").orElse(true);
        plan.settings = ProcessorSettings.read(properties, prefix);
        plan.brokerOptions = BrokerOptions.read(properties, prefix, plan.broker);

        // Parameters: one payload, optionally the Delivery and the transaction's Connection.
        Argument<?>[] args = method.getArguments();
        int payload = -1;
        int delivery = -1;
        int connection = -1;
        for (int i = 0; i < args.length; i++) {
            Class<?> type = args[i].getType();
            if (Delivery.class.equals(type)) {
                delivery = i;
            } else if (Connection.class.equals(type)) {
                connection = i;
            } else if (payload < 0) {
                payload = i;
            } else {
                throw new ConfigurationException("@IdempotentListener method " + plan.method
                        + " has two payload parameters (" + args[payload] + ", " + args[i]
                        + "); it takes one payload, optionally a Delivery and a java.sql.Connection");
            }
        }
        if (payload < 0) {
            throw new ConfigurationException("@IdempotentListener method " + plan.method + " has no payload parameter");
        }
        Argument<?> payloadType = args[payload];
        plan.codec = codec(payloadType);
        plan.keys = keys(plan, a, payloadType);

        Class<?> compensation = a.classValue(IdempotentListener.class, "compensation").orElse(Compensation.class);
        if (!Compensation.class.equals(compensation)) {
            plan.compensation = (Compensation) context.findBean(compensation).orElseThrow(() -> new ConfigurationException(
                    "@IdempotentListener(compensation = " + compensation.getSimpleName() + ".class) on " + plan.method
                            + ": no bean of that type"));
        }
        Object bean = context.getBean(found.bean());
        plan.invoker = new Invoker(bean, method, args.length, payload, delivery, connection);
        return plan;
    }

    /** Calls the listener method with its payload, and the delivery and connection when it asks for them. */
    record Invoker(Object bean, ExecutableMethod<Object, Object> method, int arity, int payload, int delivery,
                   int connection) {
        void invoke(Delivery<Object> d, Connection tx) {
            if (connection >= 0 && tx == null) {
                throw new IllegalStateException("no transaction connection: the listener is not on the ledger");
            }
            Object[] values = new Object[arity];
            values[payload] = d.payload();
            if (delivery >= 0) {
                values[delivery] = d;
            }
            if (connection >= 0) {
                values[connection] = tx;
            }
            method.invoke(bean, values);
        }
    }

    private static String describe(ExecutableMethod<?, ?> method) {
        return method.getDeclaringType().getName() + "." + method.getMethodName();
    }

    @SuppressWarnings("unchecked")
    private PayloadCodec<Object> codec(Argument<?> type) {
        if (String.class.equals(type.getType())) {
            return (PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.utf8();
        }
        if (byte[].class.equals(type.getType())) {
            return (PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.bytes();
        }
        JsonMapper mapper = context.findBean(JsonMapper.class).orElseThrow(() -> new ConfigurationException(
                "no JsonMapper bean to decode " + type.getTypeName()
                        + ": add micronaut-serde-jackson (or micronaut-jackson-databind)"));
        Argument<Object> argument = (Argument<Object>) type;
        return body -> {
            Object value = mapper.readValue(body, argument);
            if (value == null) {
                throw new IllegalArgumentException("a JSON null is not a " + type.getTypeName());
            }
            return value;
        };
    }

    private KeySource<Object> keys(Plan plan, AnnotationMetadata a, Argument<?> payloadType) {
        KeyFrom from = a.enumValue(IdempotentListener.class, "keySource", KeyFrom.class).orElse(KeyFrom.PROPERTY);
        String key = properties.annotationText(a, IdempotentListener.class, "key").orElse("");
        String suffix = properties.annotationText(a, IdempotentListener.class, "keySuffix").orElse("");
        KeySource<Object> source = switch (from) {
            case MESSAGE_KEY -> KeySource.messageKey();
            case MESSAGE_ID -> KeySource.messageId();
            case HEADER -> {
                if (key.isBlank()) {
                    throw new ConfigurationException("@IdempotentListener on " + plan.method
                            + ": keySource = HEADER needs key = \"<header name>\"");
                }
                yield KeySource.header(key);
            }
            case PROPERTY -> property(plan, payloadType.getType(), key);
        };
        if (suffix.isEmpty()) {
            return source;
        }
        return (envelope, payload) -> {
            String value = source.keyOf(envelope, payload);
            return value == null ? null : value + suffix;
        };
    }

    private static KeySource<Object> property(Plan plan, Class<?> type, String path) {
        if (path.isBlank()) {
            throw new ConfigurationException("@IdempotentListener on " + plan.method
                    + " needs key = \"<property of " + type.getSimpleName() + ">\" (or another keySource)");
        }
        List<BeanProperty<Object, Object>> chain = new ArrayList<>();
        Class<?> current = type;
        for (String name : path.split("\\.")) {
            Class<?> owner = current;
            @SuppressWarnings("unchecked")
            BeanIntrospection<Object> introspection = (BeanIntrospection<Object>) BeanIntrospector.SHARED
                    .findIntrospection(owner).orElseThrow(() -> new ConfigurationException("@IdempotentListener on "
                            + plan.method + ": key '" + path + "': " + owner.getName() + " is not introspected; annotate "
                            + "it with @Serdeable or @Introspected"));
            BeanProperty<Object, Object> property = introspection.getProperty(name).orElseThrow(() ->
                    new ConfigurationException("@IdempotentListener on " + plan.method + ": key '" + path + "': "
                            + owner.getSimpleName() + " has no property '" + name + "' (it has "
                            + introspection.getBeanProperties().stream().map(BeanProperty::getName).toList() + ")"));
            chain.add(property);
            current = property.getType();
        }
        return (envelope, payload) -> {
            Object value = payload;
            for (BeanProperty<Object, Object> property : chain) {
                if (value == null) {
                    return null;
                }
                value = property.get(value);
            }
            return value == null ? null : value.toString();
        };
    }
}
