package dev.idem.micronaut.app;

import dev.idem.micronaut.IdempotentListener;
import dev.idem.micronaut.KeyFrom;
import io.micronaut.context.annotation.Requires;
import jakarta.inject.Singleton;

/** Listeners that must not start: switched on one by one by the start-up failure tests. */
public final class WrongListeners {

    private WrongListeners() {
    }

    @Singleton
    @Requires(property = "test.wrong", value = "same-name")
    public static class SameName {
        @IdempotentListener(name = "twice", topic = "a", group = "g", keySource = KeyFrom.MESSAGE_ID, ledger = false)
        public void first(String body) {
        }

        @IdempotentListener(name = "twice", topic = "b", group = "g", keySource = KeyFrom.MESSAGE_ID, ledger = false)
        public void second(String body) {
        }
    }

    @Singleton
    @Requires(property = "test.wrong", value = "no-payload")
    public static class NoPayload {
        @IdempotentListener(topic = "a", group = "g", keySource = KeyFrom.MESSAGE_ID, ledger = false)
        public void on() {
        }
    }

    @Singleton
    @Requires(property = "test.wrong", value = "no-property")
    public static class NoProperty {
        @IdempotentListener(topic = "a", group = "g", key = "orderId", ledger = false)
        public void on(Order order) {
        }
    }
}
