package dev.idem.spring.internal;

import dev.idem.core.Compensation;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.spring.Broker;
import dev.idem.spring.IdemProperties;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One {@code @IdempotentListener}, resolved against its annotation and {@code idem.listeners.<name>.*}:
 * what the container builds its processor and consumer from.
 *
 * @param name            unique name, in configuration and metrics
 * @param where           the method, for messages
 * @param compensation    a {@code Compensation} bean, or null
 * @param compensationHook an {@code @IdempotentCompensation} method's invoker (takes the dead letter), or null
 * @param settings        the listener's properties
 */
public record ListenerPlan(String name, String where, Broker broker, String topic, String group,
                           PayloadCodec<Object> codec, KeySource<Object> keys, ListenerCall invoker,
                           @Nullable Compensation compensation, @Nullable CompensationHook compensationHook,
                           int maxAttempts, Duration lease, String deadLetterTopic, int concurrency, boolean ledger,
                           IdemProperties.Listener settings) {

    /** The same plan with an {@code @IdempotentCompensation} method for its dead letters. */
    ListenerPlan withHook(CompensationHook hook) {
        return new ListenerPlan(name, where, broker, topic, group, codec, keys, invoker, compensation, hook,
                maxAttempts, lease, deadLetterTopic, concurrency, ledger, settings);
    }
}
