package dev.idem.micronaut.app;

import dev.idem.micronaut.Idempotent;
import dev.idem.micronaut.IdempotentListener;
import dev.idem.micronaut.KeyFrom;
import io.micronaut.configuration.kafka.annotation.ErrorStrategy;
import io.micronaut.configuration.kafka.annotation.ErrorStrategyValue;
import io.micronaut.configuration.kafka.annotation.KafkaListener;
import io.micronaut.configuration.kafka.annotation.Topic;
import io.micronaut.context.annotation.Requires;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Listeners that must not start: switched on one by one by the start-up failure tests. */
public final class WrongListeners {

    private WrongListeners() {
    }

    @Singleton
    @Requires(property = "test.wrong", value = "same-name")
    public static class SameName {
        @IdempotentListener(name = "twice", topic = "a", group = "g", keySource = KeyFrom.MESSAGE_ID, ledger = false)
        public void first(String body) {
        }

        @IdempotentListener(name = "twice", topic = "b", group = "g", keySource = KeyFrom.MESSAGE_ID, ledger = false)
        public void second(String body) {
        }
    }

    @Singleton
    @Requires(property = "test.wrong", value = "no-payload")
    public static class NoPayload {
        @IdempotentListener(topic = "a", group = "g", keySource = KeyFrom.MESSAGE_ID, ledger = false)
        public void on() {
        }
    }

    @Singleton
    @Requires(property = "test.wrong", value = "no-property")
    public static class NoProperty {
        @IdempotentListener(topic = "a", group = "g", key = "orderId", ledger = false)
        public void on(Order order) {
        }
    }

    /** A wrapped listener without a name: Idem names it {@code <groupId>-<topic>}. */
    @KafkaListener(groupId = "${test.wrong.group}", autoStartup = false, errorStrategy = @ErrorStrategy(
            value = ErrorStrategyValue.RETRY_ON_ERROR, retryCount = Integer.MAX_VALUE))
    @Requires(property = "test.wrong", value = "wrapped")
    public static class WrappedWithoutName {
        @Topic("${test.wrong.topic}")
        @Idempotent
        public void on(ConsumerRecord<String, String> record) {
        }
    }

    /** A wrapped listener that takes the name of an {@code @IdempotentListener}. */
    @KafkaListener(groupId = "g", autoStartup = false, errorStrategy = @ErrorStrategy(
            value = ErrorStrategyValue.RETRY_ON_ERROR, retryCount = Integer.MAX_VALUE))
    @Requires(property = "test.wrong", value = "wrapped-same-name")
    public static class WrappedSameName {
        @Topic("a")
        @Idempotent(name = "health-orders")
        public void on(ConsumerRecord<String, String> record) {
        }
    }
}
