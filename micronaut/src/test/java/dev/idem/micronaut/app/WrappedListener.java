package dev.idem.micronaut.app;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.micronaut.Idempotent;
import dev.idem.micronaut.KeyFrom;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micronaut.configuration.kafka.annotation.ErrorStrategy;
import io.micronaut.configuration.kafka.annotation.ErrorStrategyValue;
import io.micronaut.configuration.kafka.annotation.KafkaListener;
import io.micronaut.configuration.kafka.annotation.OffsetReset;
import io.micronaut.configuration.kafka.annotation.Topic;
import io.micronaut.context.annotation.Bean;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Requires;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * An existing micronaut-kafka listener with Idem put in front of it by one annotation. Records
 * whose value is {@code slow} take a second; {@code poison} always fails.
 */
@KafkaListener(groupId = "${test.wrapped.group}", offsetReset = OffsetReset.EARLIEST, threads = 2,
        errorStrategy = @ErrorStrategy(value = ErrorStrategyValue.RETRY_ON_ERROR, retryCount = Integer.MAX_VALUE,
                retryDelay = "100ms"))
@Requires(property = "test.wrapped.topic")
public class WrappedListener {

    private final Effects effects;

    public WrappedListener(Effects effects) {
        this.effects = effects;
    }

    @Topic("${test.wrapped.topic}")
    @Idempotent(name = "wrapped-orders", keySource = KeyFrom.MESSAGE_KEY, maxAttempts = 4, lease = "10s",
            compensation = WrappedListener.Undo.class)
    public void receive(ConsumerRecord<String, String> record) throws InterruptedException {
        effects.call("wrapped", record.key());
        if (record.value().equals("slow")) {
            Thread.sleep(1_000);
        }
        if (record.value().equals("poison")) {
            throw new IllegalStateException("poison " + record.key());
        }
    }

    /** The wrapped listener's compensation. */
    @Singleton
    @Requires(property = "test.wrapped.topic")
    public static class Undo implements Compensation {
        private final Effects effects;

        public Undo(Effects effects) {
            this.effects = effects;
        }

        @Override
        public void compensate(DeadLetter deadLetter) {
            effects.compensated("wrapped", deadLetter.key().value());
        }
    }

    /** Meters, so the test sees Idem's outcomes (Busy among them). */
    @Factory
    @Requires(property = "test.wrapped.topic")
    public static class Meters {
        @Bean
        @Singleton
        MeterRegistry registry() {
            return new SimpleMeterRegistry();
        }
    }
}
