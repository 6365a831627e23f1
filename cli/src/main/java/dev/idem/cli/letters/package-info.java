/**
 * Dead-letter topics on Kafka and RocketMQ: scanning them fast (all partitions or queues, headers
 * decoded, payloads left as bytes), reading one entry, and sending an original message again.
 */
package dev.idem.cli.letters;
