package dev.idem.micronaut.internal;

import dev.idem.micronaut.Broker;
import io.micronaut.context.exceptions.ConfigurationException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * A listener's settings that only one broker's consumer has, read from {@code idem.listeners.<name>.*}
 * under the names of its builder: Kafka's {@code join-timeout}; RocketMQ's {@code batch-size},
 * {@code orderly} and {@code consume-from} ({@code last-offset} or {@code first-offset}). A key for the
 * other broker's consumer fails start-up naming it.
 *
 * @param joinTimeout Kafka: how long the consumer may go without joining its group before it reports it
 * @param batchSize   RocketMQ: messages per listener call, claimed in one round trip
 * @param orderly     RocketMQ: each queue consumed in order
 * @param firstOffset RocketMQ: a new group starts from the first offset (else from the last)
 */
public record BrokerOptions(Optional<Duration> joinTimeout, Optional<Integer> batchSize, Optional<Boolean> orderly,
                            Optional<Boolean> firstOffset) {

    /** Keys only a Kafka listener takes. */
    public static final Set<String> KAFKA_KEYS = Set.of("join-timeout");
    /** Keys only a RocketMQ listener takes. */
    public static final Set<String> ROCKETMQ_KEYS = Set.of("batch-size", "orderly", "consume-from");

    /** Reads the keys under {@code prefix} (ending in '.') for a listener on {@code broker}. */
    public static BrokerOptions read(Settings settings, String prefix, Broker broker) {
        for (String key : broker == Broker.KAFKA ? ROCKETMQ_KEYS : KAFKA_KEYS) {
            if (settings.isSet(prefix + key)) {
                throw new ConfigurationException(prefix + key + " is a setting of " + (broker == Broker.KAFKA
                        ? "RocketMQ" : "Kafka") + " listeners, and this listener consumes from " + broker);
            }
        }
        Optional<Integer> batchSize = settings.optionalInt(prefix + "batch-size");
        if (batchSize.isPresent() && batchSize.get() < 1) {
            throw new ConfigurationException(prefix + "batch-size must be >= 1 but was " + batchSize.get());
        }
        Optional<Boolean> firstOffset = settings.optionalText(prefix + "consume-from").map(value -> switch (value.trim()) {
            case "first-offset" -> true;
            case "last-offset" -> false;
            default -> throw new ConfigurationException(prefix + "consume-from must be first-offset or last-offset "
                    + "but was '" + value + "'");
        });
        return new BrokerOptions(settings.optionalDuration(prefix + "join-timeout"), batchSize,
                settings.optionalBoolean(prefix + "orderly"), firstOffset);
    }
}
