/**
 * Dead-letter topics on Kafka and RocketMQ: scanning them fast (all partitions or queues, headers
 * decoded, payloads left as bytes), reading one entry, and sending an original message again.
 */
@NullMarked
package dev.idem.cli.letters;

import org.jspecify.annotations.NullMarked;
