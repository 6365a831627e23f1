package dev.idem.micronaut;

import dev.idem.core.Compensation;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.KafkaRecordProcessor;
import dev.idem.kafka.PollResult;
import dev.idem.kafka.Redelivery;
import dev.idem.listener.ListenerBroker;
import dev.idem.listener.ListenerHandler;
import dev.idem.listener.ListenerPayloads;
import dev.idem.listener.ListenerProcessors;
import dev.idem.listener.ListenerSpec;
import dev.idem.micronaut.internal.PropertyReader;
import dev.idem.redis.RedisClaimStore;
import io.micronaut.aop.InterceptorBean;
import io.micronaut.aop.MethodInterceptor;
import io.micronaut.aop.MethodInvocationContext;
import io.micronaut.context.BeanContext;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.annotation.AnnotationMetadata;
import io.micronaut.core.annotation.AnnotationValue;
import io.micronaut.core.type.Argument;
import io.micronaut.core.util.StringUtils;
import io.micronaut.inject.ExecutableMethod;
import io.micronaut.json.JsonMapper;
import jakarta.annotation.PreDestroy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The around advice of {@link Idempotent}: runs each record a micronaut-kafka listener receives
 * through Idem's {@link KafkaRecordProcessor} (one record per call, on the poll thread). When Idem
 * decides a redelivery (a failure to retry, a key another consumer holds, infrastructure trouble),
 * it throws {@link RedeliveryRequested}; the listener's {@code RETRY_ON_ERROR} strategy with
 * {@code retryCount = Integer.MAX_VALUE}, which start-up enforces, seeks back to the record and
 * delivers it again. Dead letters and compensations are Idem's: the record is then acknowledged.
 */
@InterceptorBean(Idempotent.class)
@Requires(classes = {ConsumerRecord.class, KafkaRecordProcessor.class})
public final class IdempotentInterceptor implements MethodInterceptor<Object, Object> {

    private static final Logger LOG = LoggerFactory.getLogger(IdempotentInterceptor.class);
    private static final ThreadLocal<MethodInvocationContext<Object, Object>> CURRENT = new ThreadLocal<>();
    private static final ThreadLocal<Object> RESULT = new ThreadLocal<>();

    private final BeanContext context;
    private final Environment environment;
    private final IdemListenerRegistry registry;
    private final Map<String, Wrapped> wrapped = new ConcurrentHashMap<>();
    private volatile @Nullable RedisClaimStore claims;

    IdempotentInterceptor(BeanContext context, Environment environment, IdemListenerRegistry registry) {
        this.context = context;
        this.environment = environment;
        this.registry = registry;
    }

    /** Idem asks micronaut-kafka to deliver the record again; not a failure of the record. */
    public static final class RedeliveryRequested extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RedeliveryRequested(String message) {
            super(message, null, false, false);
        }
    }

    private record Wrapped(String name, int recordArgument, KafkaRecordProcessor<Object> processor) {
    }

    @Override
    public Object intercept(MethodInvocationContext<Object, Object> invocation) {
        Wrapped w = wrapped.get(id(invocation.getExecutableMethod()));
        if (w == null) {
            w = build(invocation.getExecutableMethod());
        }
        ConsumerRecord<?, ?> record = (ConsumerRecord<?, ?>) invocation.getParameterValues()[w.recordArgument];
        ConsumerRecord<byte[], byte[]> bytes = asBytes(record);
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        CURRENT.set(invocation);
        RESULT.remove();
        PollResult result;
        try {
            result = w.processor.process(recordsOf(partition, bytes));
        } finally {
            CURRENT.remove();
        }
        Object value = RESULT.get();
        RESULT.remove();
        Redelivery redelivery = result.redeliveries().get(partition);
        if (redelivery != null) {
            throw new RedeliveryRequested("Idem listener '" + w.name + "': redeliver " + record.topic() + "-"
                    + record.partition() + "@" + record.offset() + " (" + result.outcomes() + ")");
        }
        return value;
    }

    @SuppressWarnings("deprecation")
    private static ConsumerRecords<byte[], byte[]> recordsOf(TopicPartition partition, ConsumerRecord<byte[], byte[]> record) {
        return new ConsumerRecords<>(Map.of(partition, List.of(record)));
    }

    private ConsumerRecord<byte[], byte[]> asBytes(ConsumerRecord<?, ?> record) {
        return new ConsumerRecord<>(record.topic(), record.partition(), record.offset(), record.timestamp(),
                record.timestampType(), record.serializedKeySize(), record.serializedValueSize(), bytes(record.key()),
                bytes(record.value()), record.headers(), record.leaderEpoch());
    }

    private byte[] bytes(Object part) {
        if (part == null || part instanceof byte[]) {
            return (byte[]) part;
        }
        if (part instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        try {
            return context.getBean(JsonMapper.class).writeValueAsBytes(part);
        } catch (Exception e) {
            throw new IllegalStateException("cannot turn a " + part.getClass().getName() + " back into bytes", e);
        }
    }

    private static String id(ExecutableMethod<?, ?> method) {
        return method.getDeclaringType().getName() + "#" + method.getMethodName() + java.util.Arrays.toString(
                method.getArgumentTypes());
    }

    /** Checks the wrapped listener and builds its processor; at start-up through {@link Check}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    synchronized Wrapped build(ExecutableMethod<?, ?> method) {
        Wrapped existing = wrapped.get(id(method));
        if (existing != null) {
            return existing;
        }
        AnnotationMetadata a = method.getAnnotationMetadata();
        String where = method.getDeclaringType().getName() + "." + method.getMethodName();
        AnnotationValue<?> listener = a.findAnnotation("io.micronaut.configuration.kafka.annotation.KafkaListener")
                .orElseThrow(() -> new ConfigurationException("@Idempotent on " + where
                        + " wraps micronaut-kafka listeners: the class needs @KafkaListener"));
        String group = listener.stringValue("groupId").filter(StringUtils::hasText)
                .or(() -> listener.stringValue().filter(StringUtils::hasText))
                .orElseThrow(() -> new ConfigurationException("@Idempotent on " + where
                        + ": its @KafkaListener needs a groupId (Idem's keys are namespaced by it)"));
        Optional<AnnotationValue<java.lang.annotation.Annotation>> strategy = listener.getAnnotation("errorStrategy");
        String value = strategy.flatMap(s -> s.stringValue()).orElse("NONE");
        int retryCount = strategy.map(s -> s.intValue("retryCount").orElse(1)).orElse(1);
        if (!"RETRY_ON_ERROR".equals(value) || retryCount != Integer.MAX_VALUE) {
            throw new ConfigurationException("@Idempotent on " + where + ": its @KafkaListener must have errorStrategy = "
                    + "@ErrorStrategy(value = ErrorStrategyValue.RETRY_ON_ERROR, retryCount = Integer.MAX_VALUE) so "
                    + "that Idem, not micronaut-kafka, decides redelivery and the dead letter (it has " + value
                    + ", retryCount " + retryCount + ")");
        }
        Argument<?>[] args = method.getArguments();
        int recordArgument = -1;
        for (int i = 0; i < args.length; i++) {
            if (ConsumerRecord.class.equals(args[i].getType())) {
                recordArgument = i;
            }
        }
        if (recordArgument < 0) {
            throw new ConfigurationException("@Idempotent on " + where
                    + ": the method must declare the ConsumerRecord parameter (micronaut-kafka binds it)");
        }
        String[] topics = listenerTopics(a, where);
        String topic = topics.length == 1 ? topics[0] : String.join(",", topics);
        String name = a.stringValue(Idempotent.class, "name").filter(StringUtils::hasText).orElse(group + "-" + topic);
        registry.wrapped(name, where);
        String section = "idem.listeners." + name;
        PropertyReader settings = new PropertyReader(environment);
        settings.checkKeys(section, ListenerPlans.LISTENER_KEYS, "an Idem setting");
        if (settings.isSet(section + ".close-timeout")) {
            throw new ConfigurationException(section + ".close-timeout is not a setting of a wrapped @KafkaListener: "
                    + "micronaut-kafka stops its consumer");
        }
        KeyFrom from = a.enumValue(Idempotent.class, "keySource", KeyFrom.class).orElse(KeyFrom.MESSAGE_KEY);
        if (from == KeyFrom.PROPERTY) {
            throw new ConfigurationException("@Idempotent on " + where
                    + ": keySource PROPERTY is for @IdempotentListener; use MESSAGE_KEY, HEADER, MESSAGE_ID or OUTBOX_ID");
        }
        ListenerHandler handler = (delivery, tx) -> {
            MethodInvocationContext<Object, Object> current = CURRENT.get();
            RESULT.set(current.proceed());
        };
        ListenerSpec spec;
        try {
            spec = ListenerSpec.builder(name, where, ListenerBroker.KAFKA).topic(topic).group(group)
                    .wrapped("its threads are @KafkaListener(threads = ...)").handler(handler)
                    .codec((PayloadCodec<Object>) (PayloadCodec<?>) PayloadCodec.bytes())
                    .keys(ListenerPayloads.keys(from, a.stringValue(Idempotent.class, "key").orElse(""), "",
                            "@Idempotent on " + where, "byte[]", path -> {
                                throw new IllegalArgumentException("no property of the bytes");
                            }))
                    .annotated("@Idempotent", member -> settings.annotationText(a, Idempotent.class, member))
                    .configured(key -> environment.getProperty(section + "." + key, String.class))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
        IdempotentProcessor.Builder<Object> processor = IdempotentProcessor.<Object>builder(
                delivery -> handler.invoke(delivery, null)).codec(spec.codec()).keys(spec.keys()).claims(claims());
        try {
            ListenerProcessors.configure(processor, spec);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
        Class<?> check = a.classValue(Idempotent.class, "dedupCheck").orElse(DedupCheck.class);
        processor.dedupCheck(DedupCheck.class.equals(check) ? DedupCheck.none() : (DedupCheck) context.getBean(check));
        Class<?> compensation = a.classValue(Idempotent.class, "compensation").orElse(Compensation.class);
        if (!Compensation.class.equals(compensation)) {
            processor.compensation((Compensation) context.getBean(compensation));
        }
        context.getBean(IdemResources.class).observe(processor, name);
        Map<String, Object> kafka = kafkaSettings(group);
        KafkaRecordProcessor.Builder<Object> builder = KafkaRecordProcessor.builder(kafka, processor);
        ListenerProcessors.deadLetterRouting(spec).ifPresent(builder::deadLetterRouting);
        KafkaRecordProcessor<Object> built;
        try {
            built = builder.build();
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(spec.failure(e), e);
        }
        Wrapped w = new Wrapped(name, recordArgument, built);
        wrapped.put(id(method), w);
        LOG.info("Idem wraps @KafkaListener {} as '{}' (group {})", where, name, group);
        return w;
    }

    /** The method's {@code @Topic} values ({@code @Topic} is repeatable: Micronaut keeps it in its container). */
    private static String[] listenerTopics(AnnotationMetadata a, String where) {
        List<AnnotationValue<java.lang.annotation.Annotation>> found = new java.util.ArrayList<>(
                a.getAnnotationValuesByName("io.micronaut.configuration.kafka.annotation.Topic"));
        a.findAnnotation("io.micronaut.configuration.kafka.annotation.Topics")
                .ifPresent(container -> found.addAll(container.getAnnotations("value")));
        String[] topics = found.stream()
                .flatMap(t -> java.util.stream.Stream.concat(java.util.Arrays.stream(t.stringValues()),
                        java.util.Arrays.stream(t.stringValues("patterns"))))
                .filter(StringUtils::hasText).distinct().toArray(String[]::new);
        if (topics.length == 0) {
            throw new ConfigurationException("@Idempotent on " + where + " needs the method's @Topic (it names the "
                    + "listener: <groupId>-<topic>)");
        }
        return topics;
    }

    private Map<String, Object> kafkaSettings(String group) {
        Map<String, Object> settings = context.getBean(IdemResources.class).kafkaClientSettings();
        if (!settings.containsKey("bootstrap.servers")) {
            environment.getProperty("kafka.bootstrap.servers", String.class)
                    .ifPresent(servers -> settings.put("bootstrap.servers", servers));
        }
        if (!settings.containsKey("bootstrap.servers")) {
            throw new ConfigurationException("idem.kafka.bootstrap.servers (or kafka.bootstrap.servers) is required "
                    + "for @Idempotent listeners' dead letters");
        }
        settings.put("group.id", group);
        return settings;
    }

    private RedisClaimStore claims() {
        if (claims == null) {
            claims = context.getBean(IdemResources.class).claimStore();
        }
        return claims;
    }

    /** Closes the wrapped listeners' processors (lease renewal, dead-letter producers). */
    @PreDestroy
    void close() {
        for (Wrapped w : wrapped.values()) {
            try {
                w.processor.close();
            } catch (Exception e) {
                LOG.warn("closing Idem's processor of '{}' failed", w.name, e);
            }
        }
        wrapped.clear();
    }

    /** Checks every {@link Idempotent} method when the context starts, so a wrong one fails start-up. */
    @jakarta.inject.Singleton
    @Requires(classes = {ConsumerRecord.class, KafkaRecordProcessor.class})
    static final class Check implements io.micronaut.context.processor.ExecutableMethodProcessor<Idempotent> {
        private final IdempotentInterceptor interceptor;

        Check(IdempotentInterceptor interceptor) {
            this.interceptor = interceptor;
        }

        @Override
        public void process(io.micronaut.inject.BeanDefinition<?> beanDefinition, ExecutableMethod<?, ?> method) {
            interceptor.build(method);
        }
    }
}
