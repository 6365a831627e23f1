/**
 * Idem's broker-neutral API: deliveries, handlers, the idempotent processor and its outcomes.
 * Adapters for Kafka and RocketMQ build on this package.
 */
package dev.idem.core;
