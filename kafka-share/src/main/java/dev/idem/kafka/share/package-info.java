/**
 * Exactly-once effects over Kafka share groups (KIP-932): {@link dev.idem.kafka.share.IdemKafkaShareConsumer}
 * claims each poll's keys, runs the handlers and accepts, releases or renews each record by its outcome.
 * Needs kafka-clients and brokers 4.2 or newer.
 */
@NullMarked
package dev.idem.kafka.share;

import org.jspecify.annotations.NullMarked;
