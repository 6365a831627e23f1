package dev.idem.micronaut;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.DedupCheck;
import dev.idem.core.Delivery;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerTransactions;
import dev.idem.micronaut.internal.Brokers;
import dev.idem.micronaut.internal.Settings;
import dev.idem.micronaut.internal.MicronautTransactions;
import dev.idem.micronaut.internal.ProcessorSettings;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.RedisUrl;
import io.micronaut.context.BeanContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.annotation.AnnotationMetadata;
import io.micronaut.core.beans.BeanIntrospection;
import io.micronaut.core.beans.BeanIntrospector;
import io.micronaut.core.beans.BeanProperty;
import io.micronaut.core.reflect.ClassUtils;
import io.micronaut.core.type.Argument;
import io.micronaut.core.util.StringUtils;
import io.micronaut.inject.ExecutableMethod;
import io.micronaut.json.JsonMapper;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
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
    private static final Set<String> LISTENER_KEYS = union(Set.of("max-attempts", "lease", "dead-letter-topic",
            "concurrency", "close-timeout"), ProcessorSettings.KEYS);
    private static final Set<String> REDIS_KEYS = Set.of("address", "key-prefix");
    private static final Set<String> ROCKETMQ_KEYS = Set.of("name-server");
    private static final Set<String> LEDGER_KEYS = Set.of("table", "create-table", "enabled");

    private final BeanContext context;
    private final Environment environment;
    private final Settings properties;
    private final IdemListenerRegistry registry;
    private final List<RunningListener> running = new ArrayList<>();
    private RedissonClient ownRedisson;
    private RedissonClient redisson;
    private RedisClaimStore claims;
    private boolean started;

    IdemListeners(BeanContext context, Environment environment, IdemListenerRegistry registry) {
        this.context = context;
        this.environment = environment;
        this.properties = new Settings(environment);
        this.registry = registry;
    }

    /**
     * A started listener: its name, broker, whether its consumer is running, how to close it, and
     * when, closed, it has let go of everything (no record runs, its dead-letter producer closed).
     */
    public record RunningListener(String name, Broker broker, String topic, String group,
                                  BooleanSupplier isRunning, AutoCloseable closer, CompletionStage<Void> released) {
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
    public synchronized Optional<RedissonClient> redisson() {
        return Optional.ofNullable(redisson);
    }

    synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        List<Plan> plans = plans();
        if (plans.isEmpty()) {
            return;
        }
        checkKeys("idem.redis", REDIS_KEYS);
        checkKeys("idem.rocketmq", ROCKETMQ_KEYS);
        checkKeys("idem.ledger", LEDGER_KEYS);
        Map<String, Object> kafka = plans.stream().anyMatch(p -> p.broker == Broker.KAFKA) ? kafkaSettings() : Map.of();
        String nameServer = plans.stream().anyMatch(p -> p.broker == Broker.ROCKETMQ)
                ? properties.required("idem.rocketmq.name-server") : null;
        JdbcEffectLedger ledger = plans.stream().anyMatch(p -> p.ledger) ? ledger() : null;
        RedisClaimStore claims = claimStore();
        try {
            for (Plan plan : plans) {
                running.add(startOne(plan, claims, ledger, kafka, nameServer));
                LOG.info("Idem listener '{}' consumes {} as {} on {}", plan.name, plan.topic, plan.group, plan.broker);
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
        if (ownRedisson != null) {
            RedissonClient client = ownRedisson;
            CompletableFuture<Void> all = CompletableFuture.allOf(released.toArray(CompletableFuture[]::new));
            if (!all.isDone()) {
                LOG.info("Idem's Redis client closes once the records still running end");
            }
            all.whenComplete((done, failure) -> client.shutdown());
            ownRedisson = null;
            redisson = null;
            claims = null;
        }
    }

    // ---- plans: everything checked before anything starts

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
    }

    private List<Plan> plans() {
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
        checkKeys("idem.listeners." + plan.name, LISTENER_KEYS);
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

    // ---- configuration

    private void checkKeys(String prefix, Set<String> known) {
        properties.checkKeys(prefix, known, "an Idem setting");
    }


    private Map<String, Object> kafkaSettings() {
        Map<String, Object> raw = environment.getProperties("idem.kafka",
                io.micronaut.core.naming.conventions.StringConvention.RAW);
        Map<String, Object> settings = new HashMap<>();
        raw.forEach((k, v) -> settings.put(k, v instanceof Collection<?> c
                ? c.stream().map(String::valueOf).collect(Collectors.joining(",")) : v));
        Object servers = settings.get("bootstrap.servers");
        if (servers == null || servers.toString().isBlank()) {
            throw new ConfigurationException("idem.kafka.bootstrap.servers is required but not set "
                    + "(idem.kafka.* are the Kafka client's settings)");
        }
        settings.putIfAbsent("auto.offset.reset", "earliest");
        return settings;
    }

    /** The claim store every listener shares (and {@link Idempotent} wrappers), made on first use. */
    synchronized RedisClaimStore claimStore() {
        if (claims == null) {
            checkKeys("idem.redis", REDIS_KEYS);
            claims = newClaimStore();
        }
        return claims;
    }

    private RedisClaimStore newClaimStore() {
        Optional<String> address = environment.getProperty("idem.redis.address", String.class).filter(StringUtils::hasText);
        if (address.isPresent()) {
            Config config;
            try {
                config = RedisUrl.parse(address.get()).config();
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("idem.redis.address: " + e.getMessage(), e);
            }
            try {
                ownRedisson = Redisson.create(config);
            } catch (RuntimeException e) {
                throw new ConfigurationException("idem.redis.address '" + RedisUrl.redacted(address.get())
                        + "': cannot connect: " + e.getMessage(), e);
            }
            redisson = ownRedisson;
        } else {
            redisson = context.findBean(RedissonClient.class).orElseThrow(() -> new ConfigurationException(
                    "idem.redis.address is required but not set (or provide a RedissonClient bean)"));
        }
        RedisClaimStore.Builder builder = RedisClaimStore.builder(redisson);
        environment.getProperty("idem.redis.key-prefix", String.class).ifPresent(builder::keyPrefix);
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("idem.redis.key-prefix: " + e.getMessage(), e);
        }
    }

    private JdbcEffectLedger ledger() {
        if (!environment.getProperty("idem.ledger.enabled", Boolean.class).orElse(true)) {
            return null;
        }
        Optional<DataSource> dataSource = context.findBean(DataSource.class);
        if (dataSource.isEmpty()) {
            return null;
        }
        // Micronaut Data's DataSource bean hands out the current transaction's connection and refuses
        // outside one; the ledger's checks run outside the handler's transaction, so they use the
        // pool behind it. The handler's transaction goes through Micronaut's transaction manager.
        JdbcEffectLedger.Builder builder = JdbcEffectLedger.builder(target(dataSource.get()))
                .createTable(environment.getProperty("idem.ledger.create-table", Boolean.class).orElse(false));
        environment.getProperty("idem.ledger.table", String.class).ifPresent(builder::table);
        transactions().ifPresent(builder::transactions);
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("idem.ledger: " + e.getMessage(), e);
        }
    }

    private DataSource target(DataSource dataSource) {
        if (ClassUtils.isPresent("io.micronaut.jdbc.DataSourceResolver", getClass().getClassLoader())) {
            return context.findBean(io.micronaut.jdbc.DataSourceResolver.class)
                    .map(resolver -> resolver.resolve(dataSource)).orElse(dataSource);
        }
        return dataSource;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Optional<LedgerTransactions> transactions() {
        if (!ClassUtils.isPresent("io.micronaut.transaction.TransactionOperations", getClass().getClassLoader())) {
            return Optional.empty();
        }
        Optional<io.micronaut.transaction.TransactionOperations<Connection>> operations = (Optional) context.findBean(
                Argument.of(io.micronaut.transaction.TransactionOperations.class, Connection.class));
        return operations.map(MicronautTransactions::new);
    }

    // ---- consumers

    private RunningListener startOne(Plan plan, RedisClaimStore claims, JdbcEffectLedger ledger,
                                     Map<String, Object> kafka, String nameServer) {
        IdempotentProcessor.Builder<Object> processor;
        if (plan.ledger && ledger != null) {
            processor = ledger.processor((delivery, tx) -> plan.invoker.invoke(delivery, tx));
        } else {
            processor = IdempotentProcessor.<Object>builder(delivery -> plan.invoker.invoke(delivery, null))
                    .dedupCheck(DedupCheck.none());
        }
        processor.claims(claims).codec(plan.codec).keys(plan.keys).maxAttempts(plan.maxAttempts).lease(plan.lease);
        plan.settings.applyTo(processor);
        if (plan.compensation != null) {
            processor.compensation(plan.compensation);
        }
        meters(processor, plan.name);
        try {
            return plan.broker == Broker.KAFKA
                    ? Brokers.kafka(plan.name, plan.topic, plan.group, processor, kafka, plan.deadLetterTopic,
                    plan.concurrency, plan.closeTimeout)
                    : Brokers.rocketMq(plan.name, plan.topic, plan.group, processor, nameServer, plan.deadLetterTopic,
                    plan.concurrency, plan.closeTimeout);
        } catch (IllegalArgumentException e) {
            String origin = plan.broker == Broker.KAFKA ? "idem.kafka" : "idem.rocketmq";
            throw new ConfigurationException("Idem listener '" + plan.name + "' (" + origin + ", idem.listeners."
                    + plan.name + "): " + e.getMessage(), e);
        }
    }

    private void meters(IdempotentProcessor.Builder<Object> processor, String listener) {
        if (ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", getClass().getClassLoader())) {
            context.findBean(io.micrometer.core.instrument.MeterRegistry.class).ifPresent(registry ->
                    processor.meterRegistry(registry).meterTag("listener", listener));
        }
    }

    static Set<String> union(Set<String> some, Set<String> more) {
        Set<String> all = new java.util.HashSet<>(some);
        all.addAll(more);
        return Set.copyOf(all);
    }

    static String lower(Broker broker) {
        return broker.name().toLowerCase(Locale.ROOT);
    }
}
