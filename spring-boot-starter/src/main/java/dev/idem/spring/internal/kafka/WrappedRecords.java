package dev.idem.spring.internal.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.idem.core.Delivery;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.KafkaRecordProcessor;
import dev.idem.kafka.PollResult;
import dev.idem.listener.ListenerHandler;
import dev.idem.spring.internal.Invoker;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;
import org.springframework.core.log.LogAccessor;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.SerializationUtils;

/**
 * Runs the typed records a spring-kafka container hands a wrapped listener through Idem's
 * {@link KafkaRecordProcessor} on the container's thread, and is the listener's call when Idem runs one:
 * the record goes to the spring-kafka listener as spring-kafka delivered it. Idem sees each record as
 * bytes (its key for the claim, its value for the dead letter); a record the container could not
 * deserialize carries its defect and its original bytes, and goes to the dead letter with the reason.
 * Thread-safe: each container thread has its own call.
 */
public final class WrappedRecords implements ListenerHandler {

    private static final LogAccessor LOG = new LogAccessor(LogFactory.getLog(WrappedRecords.class));
    private static final ThreadLocal<Call> CURRENT = new ThreadLocal<>();

    /** One container call: the typed record behind each byte record, defects, and how to run a record. */
    private record Call(Map<ConsumerRecord<byte[], byte[]>, ConsumerRecord<?, ?>> typed, Map<byte[], String> defects,
                        Consumer<ConsumerRecord<?, ?>> deliver) {
    }

    private final String where;
    private volatile @Nullable KafkaRecordProcessor<Object> processor;
    private volatile @Nullable JsonMapper json;

    WrappedRecords(String where) {
        this.where = where;
    }

    /** The processor these records run through, once built. */
    void use(KafkaRecordProcessor<Object> built) {
        this.processor = built;
    }

    /** The codec of the listener's plan: the record's bytes, or its defect as a decode failure. */
    PayloadCodec<Object> codec() {
        return body -> {
            Call call = CURRENT.get();
            String defect = call == null ? null : call.defects.get(body);
            if (defect != null) {
                throw new IllegalArgumentException(defect);
            }
            return body;
        };
    }

    /**
     * Runs {@code records} (one poll's, or one) through Idem on this thread; Idem calls {@code deliver}
     * with each record it runs, inside the ledger's transaction.
     */
    PollResult process(List<? extends ConsumerRecord<?, ?>> records, Consumer<ConsumerRecord<?, ?>> deliver) {
        KafkaRecordProcessor<Object> running = Objects.requireNonNull(processor, "not started");
        Map<ConsumerRecord<byte[], byte[]>, ConsumerRecord<?, ?>> typed = new IdentityHashMap<>();
        Map<byte[], String> defects = new IdentityHashMap<>();
        Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byPartition = new LinkedHashMap<>();
        for (ConsumerRecord<?, ?> record : records) {
            ConsumerRecord<byte[], byte[]> bytes = asBytes(record, defects);
            typed.put(bytes, record);
            byPartition.computeIfAbsent(new TopicPartition(record.topic(), record.partition()),
                    partition -> new ArrayList<>()).add(bytes);
        }
        return run(running, new ConsumerRecords<>(byPartition, Map.of()), new Call(typed, defects, deliver));
    }

    /** Processes {@code records} on this thread with {@code call} as its context. */
    private static PollResult run(KafkaRecordProcessor<Object> running, ConsumerRecords<byte[], byte[]> records,
                                  Call call) {
        CURRENT.set(call);
        try {
            return running.process(records);
        } finally {
            CURRENT.remove();
        }
    }

    /**
     * Runs a record the consumer could not deserialize while polling, from the bytes the exception
     * carries: Idem dead-letters it with the reason (the listener never runs).
     */
    PollResult processUndecodable(RecordDeserializationException failure) {
        KafkaRecordProcessor<Object> running = Objects.requireNonNull(processor, "not started");
        byte[] key = bytesOf(failure.keyBuffer());
        byte[] value = bytesOf(failure.valueBuffer());
        value = value == null ? new byte[0] : value;
        ConsumerRecord<byte[], byte[]> bytes = new ConsumerRecord<>(failure.topicPartition().topic(),
                failure.topicPartition().partition(), failure.offset(), failure.timestamp(), failure.timestampType(),
                key == null ? -1 : key.length, value.length, key, value,
                failure.headers() == null ? new RecordHeaders() : failure.headers(), Optional.empty());
        Map<byte[], String> defects = new IdentityHashMap<>();
        defects.put(value, "the " + (failure.origin() == RecordDeserializationException.DeserializationExceptionOrigin.KEY
                ? "key" : "value") + " could not be deserialized by the consumer: " + (failure.getCause() != null
                ? failure.getCause() : failure.getMessage()));
        return run(running, new ConsumerRecords<>(Map.of(failure.topicPartition(), List.of(bytes)), Map.of()),
                new Call(new IdentityHashMap<>(), defects, record -> {
                    throw new IllegalStateException("a record that could not be deserialized does not run");
                }));
    }

    private static byte @Nullable [] bytesOf(@Nullable ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    @Override
    public void invoke(Delivery<Object> delivery, @Nullable Connection tx) throws Exception {
        Call call = Objects.requireNonNull(CURRENT.get(), "no container call on this thread");
        Object source = delivery.envelope().source(ConsumerRecord.class).orElseThrow();
        ConsumerRecord<?, ?> record = call.typed.get(source);
        try {
            call.deliver.accept(Objects.requireNonNull(record, "the record Idem runs is not this call's"));
        } catch (ListenerExecutionFailedException e) {
            // spring-kafka's wrapper of what the method threw: Idem's failure count, dead letter and
            // NonRetryableException see the method's own exception.
            Invoker.throwCause(e);
        }
    }

    private ConsumerRecord<byte[], byte[]> asBytes(ConsumerRecord<?, ?> record, Map<byte[], String> defects) {
        RecordHeaders headers = new RecordHeaders(record.headers().toArray());
        DeserializationException valueFailure = failure(record, record.value(), KafkaUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER);
        DeserializationException keyFailure = failure(record, record.key(), KafkaUtils.KEY_DESERIALIZER_EXCEPTION_HEADER);
        headers.remove(KafkaUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER);
        headers.remove(KafkaUtils.KEY_DESERIALIZER_EXCEPTION_HEADER);
        String defect = null;
        byte[] key = null;
        byte[] value = new byte[0];
        // An object Idem cannot write back as bytes: its defect sends the record to the dead letter.
        try {
            key = keyFailure != null ? keyFailure.getData() : bytes(record.key());
        } catch (IllegalStateException e) {
            defect = "the key: " + e.getMessage() + ": " + e.getCause();
        }
        try {
            value = valueFailure != null ? valueFailure.getData() : bytes(record.value());
        } catch (IllegalStateException e) {
            defect = "the value: " + e.getMessage() + ": " + e.getCause();
        }
        if (valueFailure != null || keyFailure != null) {
            DeserializationException failure = valueFailure != null ? valueFailure : Objects.requireNonNull(keyFailure);
            defect = (failure.isKey() ? "the key" : "the value") + " could not be deserialized by the "
                    + "container's deserializer: " + (failure.getCause() != null ? failure.getCause() : failure);
        }
        if (defect != null) {
            value = value == null ? new byte[0] : value;
            defects.put(value, defect);
        }
        return new ConsumerRecord<>(record.topic(), record.partition(), record.offset(), record.timestamp(),
                record.timestampType(), record.serializedKeySize(), record.serializedValueSize(), key, value, headers,
                record.leaderEpoch());
    }

    private static @Nullable DeserializationException failure(ConsumerRecord<?, ?> record, @Nullable Object part,
                                                              String header) {
        if (part instanceof DeserializationException failure) {
            return failure;
        }
        return part == null ? SerializationUtils.getExceptionFromHeader(record, header, LOG) : null;
    }

    /** A key or value as bytes: bytes as they are, text as UTF-8, any other object as JSON. */
    private byte @Nullable [] bytes(@Nullable Object part) {
        if (part == null || part instanceof byte[]) {
            return (byte[]) part;
        }
        if (part instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        if (part instanceof Number || part instanceof java.util.UUID) {
            return part.toString().getBytes(StandardCharsets.UTF_8);
        }
        JsonMapper mapper = json;
        if (mapper == null) {
            mapper = JsonMapper.builder().findAndAddModules().build();
            json = mapper;
        }
        try {
            return mapper.writeValueAsBytes(part);
        } catch (JsonProcessingException | RuntimeException e) {
            throw new IllegalStateException("Idem listener " + where + ": cannot write a " + part.getClass().getName()
                    + " back as bytes for its key and dead letter", e);
        }
    }
}
