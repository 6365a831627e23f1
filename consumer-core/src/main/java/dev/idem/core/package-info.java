/**
 * Idem's broker-neutral API: the idempotent processor and its outcomes, deliveries and handlers,
 * and the choices every user makes (key source, payload codec, business dedup check, backoff,
 * compensation, dead-letter routing, the handler interceptor), each with stock implementations as
 * static factories. Adapters for Kafka and RocketMQ build on this package.
 */
@NullMarked
package dev.idem.core;

import org.jspecify.annotations.NullMarked;
