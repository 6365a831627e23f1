/**
 * The Kafka adapter: {@link dev.idem.kafka.IdemKafkaConsumer}, which owns the poll loop and maps
 * Idem's outcomes onto committed offsets, seeks and pauses; {@link dev.idem.kafka.KafkaRecordProcessor}
 * for a poll loop of your own; the settings both Idem Kafka consumers share
 * ({@link dev.idem.kafka.KafkaConsumerBuilder}); and the dead-letter publisher
 * ({@link dev.idem.kafka.KafkaDeadLetterPublisher}). Nothing here is null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.idem.kafka;

import org.jspecify.annotations.NullMarked;
