package dev.idem.micronaut;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.listener.ListenerBroker;
import dev.idem.listener.ListenerHandler;
import dev.idem.listener.ListenerPayloads;
import dev.idem.listener.ListenerSetting;
import dev.idem.listener.ListenerSpec;
import dev.idem.micronaut.internal.PropertyReader;
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
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Resolves every {@link IdempotentListener} method into a plan (its broker, topic, group, key,
 * codec, compensation and settings) against its annotation and the configuration, before anything
 * starts: a wrong or missing setting fails start-up with a {@link ConfigurationException} naming it.
 */
final class ListenerPlans {

    /** The keys of a listener's section: every {@link ListenerSetting}'s. */
    static final Set<String> LISTENER_KEYS = ListenerSetting.all().stream().map(ListenerSetting::key)
            .collect(Collectors.toUnmodifiableSet());

    private final BeanContext context;
    private final Environment environment;
    private final PropertyReader properties;
    private final IdemListenerRegistry registry;

    ListenerPlans(BeanContext context, Environment environment, PropertyReader properties, IdemListenerRegistry registry) {
        this.context = context;
        this.environment = environment;
        this.properties = properties;
        this.registry = registry;
    }

    /** Every listener found, resolved and checked; two with one name are refused. */
    List<ListenerSpec> plans() {
        Map<String, ListenerSpec> byName = new LinkedHashMap<>();
        Map<String, String> wrapped = registry.wrapped();
        for (IdemListenerRegistry.Found found : registry.listeners()) {
            ListenerSpec plan = plan(found);
            ListenerSpec other = byName.putIfAbsent(plan.name(), plan);
            String otherMethod = other != null ? other.where() : wrapped.get(plan.name());
            if (otherMethod != null) {
                throw new ConfigurationException("two Idem listeners are named '" + plan.name() + "': " + otherMethod
                        + " and " + plan.where() + "; give one a different name");
            }
        }
        for (IdemListenerRegistry.Found found : registry.compensations()) {
            String listener = found.method().stringValue(IdempotentCompensation.class).orElse("");
            String where = describe(found.method());
            ListenerSpec plan = byName.get(listener);
            if (plan == null) {
                throw new ConfigurationException("@IdempotentCompensation(\"" + listener + "\") on " + where
                        + " names no listener; listeners are " + byName.keySet());
            }
            if (plan.compensation() != null) {
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
            byName.put(listener, plan.withCompensation(deadLetter -> method.invoke(bean, deadLetter)));
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

    private ListenerSpec plan(IdemListenerRegistry.Found found) {
        @SuppressWarnings("unchecked")
        ExecutableMethod<Object, Object> method = (ExecutableMethod<Object, Object>) found.method();
        AnnotationMetadata a = method.getAnnotationMetadata();
        String where = describe(method);
        String topic = text(a, "topic");
        String group = text(a, "group");
        if (topic.isBlank() || group.isBlank()) {
            throw new ConfigurationException("@IdempotentListener on " + where + " needs a topic and a group");
        }
        String name = properties.annotationText(a, IdempotentListener.class, "name").filter(StringUtils::hasText)
                .orElse(group + "-" + topic);
        Broker broker = a.enumValue(IdempotentListener.class, "broker", Broker.class).orElse(Broker.KAFKA);
        String section = "idem.listeners." + name;
        properties.checkKeys(section, LISTENER_KEYS, "an Idem setting");

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
                throw new ConfigurationException("@IdempotentListener method " + where
                        + " has two payload parameters (" + args[payload] + ", " + args[i]
                        + "); it takes one payload, optionally a Delivery and a java.sql.Connection");
            }
        }
        if (payload < 0) {
            throw new ConfigurationException("@IdempotentListener method " + where + " has no payload parameter");
        }
        Argument<?> payloadType = args[payload];
        Class<?> compensationType = a.classValue(IdempotentListener.class, "compensation").orElse(Compensation.class);
        Compensation compensation = null;
        if (!Compensation.class.equals(compensationType)) {
            compensation = (Compensation) context.findBean(compensationType).orElseThrow(() -> new ConfigurationException(
                    "@IdempotentListener(compensation = " + compensationType.getSimpleName() + ".class) on " + where
                            + ": no bean of that type"));
        }
        Object bean = context.getBean(found.bean());
        String what = "@IdempotentListener";
        try {
            return ListenerSpec.builder(name, where, ListenerBroker.valueOf(broker.name()))
                    .topic(topic).group(group).ledger(a.booleanValue(IdempotentListener.class, "ledger").orElse(true))
                    .handler(new Invoker(bean, method, args.length, payload, delivery, connection))
                    .codec(ListenerPayloads.plainCodec(payloadType.getType()).orElseGet(() -> json(payloadType)))
                    .keys(ListenerPayloads.keys(
                            a.enumValue(IdempotentListener.class, "keySource", KeyFrom.class).orElse(KeyFrom.PROPERTY),
                            text(a, "key"), text(a, "keySuffix"), what + " on " + where,
                            payloadType.getType().getSimpleName(), path -> property(where, payloadType.getType(), path)))
                    .compensation(compensation)
                    .annotated(what, member -> properties.annotationText(a, IdempotentListener.class, member))
                    .configured(key -> environment.getProperty(section + "." + key, String.class))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
    }

    private String text(AnnotationMetadata a, String member) {
        return properties.annotationText(a, IdempotentListener.class, member).orElse("");
    }

    /** Calls the listener method with its payload, and the delivery and connection when it asks for them. */
    record Invoker(Object bean, ExecutableMethod<Object, Object> method, int arity, int payload, int delivery,
                   int connection) implements ListenerHandler {
        @Override
        public boolean wantsConnection() {
            return connection >= 0;
        }

        @Override
        public void invoke(Delivery<Object> d, @Nullable Connection tx) {
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

    /** The application's JSON for any other payload type. */
    @SuppressWarnings("unchecked")
    private PayloadCodec<Object> json(Argument<?> type) {
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

    private static KeySource<Object> property(String where, Class<?> type, String path) {
        List<BeanProperty<Object, Object>> chain = new ArrayList<>();
        Class<?> current = type;
        for (String name : path.split("\\.")) {
            Class<?> owner = current;
            @SuppressWarnings("unchecked")
            BeanIntrospection<Object> introspection = (BeanIntrospection<Object>) BeanIntrospector.SHARED
                    .findIntrospection(owner).orElseThrow(() -> new ConfigurationException("@IdempotentListener on "
                            + where + ": key '" + path + "': " + owner.getName() + " is not introspected; annotate "
                            + "it with @Serdeable or @Introspected"));
            BeanProperty<Object, Object> property = introspection.getProperty(name).orElseThrow(() ->
                    new ConfigurationException("@IdempotentListener on " + where + ": key '" + path + "': "
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
