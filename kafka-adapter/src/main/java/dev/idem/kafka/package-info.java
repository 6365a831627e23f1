/**
 * The Kafka adapter: runs deliveries from Kafka topics through Idem's processor and maps its
 * outcomes onto committed offsets, seeks and pauses.
 */
package dev.idem.kafka;
