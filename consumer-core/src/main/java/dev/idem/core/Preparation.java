package dev.idem.core;

import dev.idem.core.internal.Failures;
import dev.idem.core.internal.Prepared;

/**
 * The first thing done to a delivered message: its payload decoded and its idempotency key found.
 * A message that cannot be decoded or has no usable key is not an error here: its defect travels
 * with it to the dead letter.
 *
 * @param <T> payload type
 */
final class Preparation<T> {

    private final String group;
    private final PayloadCodec<T> codec;
    private final KeySource<T> keys;

    Preparation(String group, PayloadCodec<T> codec, KeySource<T> keys) {
        this.group = group;
        this.codec = codec;
        this.keys = keys;
    }

    /** Decodes the payload and finds the key; never throws: a defect travels with the message. */
    Prepared<T> prepare(Envelope envelope) {
        T payload = null;
        String defect = null;
        Throwable cause = null;
        try {
            payload = codec.decode(envelope.body());
            if (payload == null) {
                defect = "undecodable payload: the codec returned null";
            }
        } catch (Exception | LinkageError | StackOverflowError e) {
            defect = "undecodable payload: " + Failures.describe(e);
            cause = e;
        }
        String key;
        try {
            key = keys.keyOf(envelope, payload);
        } catch (RuntimeException e) {
            IdempotencyKey fallback = fallback(envelope);
            // A payload key function given no payload (undecodable body) finds no key: the decode
            // failure is the reason then. Otherwise the key function's own failure is.
            return defect != null ? new Prepared<>(envelope, fallback, null, defect, cause)
                    : new Prepared<>(envelope, fallback, null, "idempotency key function failed: "
                    + Failures.describe(e), e);
        }
        if (key == null || key.isBlank()) {
            return new Prepared<>(envelope, fallback(envelope), null, defect != null ? defect : "no idempotency key", cause);
        }
        if (key.length() > IdempotencyKey.MAX_VALUE_LENGTH) {
            return new Prepared<>(envelope, fallback(envelope), null, "idempotency key longer than "
                    + IdempotencyKey.MAX_VALUE_LENGTH + " characters (" + key.length() + ")", cause);
        }
        return new Prepared<>(envelope, new IdempotencyKey(group, envelope.topic(), key), payload, defect, cause);
    }

    /** The key of a message without a usable one of its own: its broker id, unique per message. */
    private IdempotencyKey fallback(Envelope envelope) {
        return new IdempotencyKey(group, envelope.topic(), envelope.messageId());
    }
}
