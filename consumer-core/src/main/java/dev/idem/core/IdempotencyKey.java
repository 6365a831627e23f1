package dev.idem.core;

import java.util.Objects;

/**
 * The identity of one business effect: a key value namespaced by consumer group and topic.
 * Immutable.
 *
 * @param group consumer group
 * @param topic topic the message came from
 * @param value the key itself, preferably a business key (order id + action), not a broker id
 */
public record IdempotencyKey(String group, String topic, String value) {

    /** Longest key value accepted: keys are stored in Redis and in the ledger's primary key. */
    public static final int MAX_VALUE_LENGTH = 512;

    /**
     * @throws IllegalArgumentException if a part is blank or the value is longer than {@value #MAX_VALUE_LENGTH}
     */
    public IdempotencyKey {
        requireText("group", group);
        requireText("topic", topic);
        requireText("value", value);
        if (value.length() > MAX_VALUE_LENGTH) {
            throw new IllegalArgumentException("idempotency key value must be at most " + MAX_VALUE_LENGTH
                    + " characters but was " + value.length());
        }
    }

    private static void requireText(String name, String text) {
        if (Objects.requireNonNull(text, name).isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank but was '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return group + "/" + topic + "/" + value;
    }
}
