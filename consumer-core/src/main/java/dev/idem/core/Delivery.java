package dev.idem.core;

import java.util.Objects;

/**
 * One delivery as the handler sees it: the decoded payload, its idempotency key, and the claim it
 * runs under. Immutable.
 *
 * @param key      idempotency key
 * @param fence    fencing token of the current claim, strictly increasing per key: pass it to writes
 *                 that must reject a stale owner
 * @param attempt  Idem's durable attempt number of this run, from 1
 * @param envelope the message as delivered
 * @param payload  decoded payload
 * @param <T>      payload type
 */
public record Delivery<T>(IdempotencyKey key, long fence, int attempt, Envelope envelope, T payload) {

    /** @throws NullPointerException if key, envelope or payload is null */
    public Delivery {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(envelope, "envelope");
        Objects.requireNonNull(payload, "payload");
    }

    /** The topic the message came from. */
    public String topic() {
        return envelope.topic();
    }
}
