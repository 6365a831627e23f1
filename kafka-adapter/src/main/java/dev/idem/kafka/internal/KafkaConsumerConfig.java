package dev.idem.kafka.internal;

import dev.idem.core.DeadLetterRouting;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.spi.DeadLetterPublisher;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The checked settings both Idem Kafka consumers share, as their builder leaves them.
 *
 * @param <T> payload type
 */
public record KafkaConsumerConfig<T>(Map<String, Object> config, IdempotentProcessor.Builder<T> processor,
                                 List<String> topics, int concurrency, UnaryOperator<DeadLetterPublisher> deadLetters,
                                 DeadLetterRouting deadLetterRouting, Consumer<Throwable> onFailure, Clock clock,
                                 Duration closeTimeout) {
}
