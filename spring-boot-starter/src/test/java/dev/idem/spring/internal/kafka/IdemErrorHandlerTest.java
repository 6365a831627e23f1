package dev.idem.spring.internal.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.kafka.PollResult;
import dev.idem.kafka.Redelivery;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.listener.MessageListenerContainer;

/**
 * What Idem's error handler does with the consumer when the listener asks for a redelivery: the request
 * arrives wrapped by spring-kafka, and a failing commit must not leave the position past records that
 * did not run.
 */
class IdemErrorHandlerTest {

    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);

    private final List<TopicPartition> paused = new ArrayList<>();
    private final MessageListenerContainer container = (MessageListenerContainer) Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {MessageListenerContainer.class}, (proxy, method, args) -> {
                if (method.getName().equals("pausePartition")) {
                    paused.add((TopicPartition) args[0]);
                }
                return method.getReturnType() == boolean.class ? false : null;
            });
    private final IdemErrorHandler handler = new IdemErrorHandler("orders", new WrappedRecords("test"));

    @AfterEach
    void close() {
        handler.close();
    }

    @Test
    void aRedeliveryWrappedBySpringKafkaSeeksBackToItsRecordAndPausesForIdemsBackoff() {
        MockConsumer<String, String> consumer = consumer();
        PollResult result = new PollResult(Map.of(P1, new OffsetAndMetadata(8)),
                Map.of(P0, new Redelivery(5, Duration.ofMinutes(1))), List.of());
        Exception thrown = new ListenerExecutionFailedException("listener failed",
                new RedeliveryRequested("orders", result));

        handler.handleBatch(thrown, records(record(P0, 5), record(P0, 6), record(P1, 7)), consumer, container, () -> { });

        assertThat(consumer.position(P0)).as("partition 0 is back at its record").isEqualTo(5);
        assertThat(consumer.position(P1)).as("partition 1 finished: no seek").isEqualTo(8);
        assertThat(consumer.committed(Set.of(P1))).containsEntry(P1, new OffsetAndMetadata(8));
        assertThat(paused).as("only the redelivered partition waits for Idem's backoff").containsExactly(P0);
    }

    @Test
    void aCommitThatFailsStillLeavesThePositionAtTheFirstRecordNotRun() {
        MockConsumer<String, String> consumer = new MockConsumer<>("earliest") {
            @Override
            public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
                throw new TimeoutException("coordinator away");
            }
        };
        assign(consumer);
        PollResult result = new PollResult(Map.of(P0, new OffsetAndMetadata(6)),
                Map.of(P0, new Redelivery(6, Duration.ZERO)), List.of());

        handler.handleRemaining(new RedeliveryRequested("orders", result), List.of(record(P0, 6), record(P0, 7)),
                consumer, container);

        assertThat(consumer.position(P0)).as("the record to redeliver comes back").isEqualTo(6);
    }

    private static MockConsumer<String, String> consumer() {
        MockConsumer<String, String> consumer = new MockConsumer<>("earliest");
        assign(consumer);
        return consumer;
    }

    /** Both partitions assigned, the position past a poll of offsets up to 8. */
    private static void assign(MockConsumer<String, String> consumer) {
        consumer.assign(List.of(P0, P1));
        consumer.updateBeginningOffsets(Map.of(P0, 0L, P1, 0L));
        consumer.seek(P0, 8);
        consumer.seek(P1, 8);
    }

    private static ConsumerRecord<String, String> record(TopicPartition partition, long offset) {
        return new ConsumerRecord<>(partition.topic(), partition.partition(), offset, "key-" + offset, "value");
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ConsumerRecords<String, String> records(ConsumerRecord<String, String>... records) {
        Map<TopicPartition, List<ConsumerRecord<String, String>>> byPartition = new java.util.LinkedHashMap<>();
        for (ConsumerRecord<String, String> r : records) {
            byPartition.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), p -> new ArrayList<>()).add(r);
        }
        return new ConsumerRecords<>((Map) byPartition, Map.of());
    }
}
