package dev.idem.micronaut.app;

import dev.idem.micronaut.IdempotentListener;
import dev.idem.micronaut.KeyFrom;
import io.micronaut.context.annotation.Requires;
import jakarta.inject.Singleton;

/** A Redis-only listener whose consumer the health test stops. */
@Singleton
@Requires(property = "test.health.topic")
public class HealthListener {

    @IdempotentListener(name = "health-orders", topic = "${test.health.topic}", group = "${test.health.group}",
            keySource = KeyFrom.MESSAGE_ID, ledger = false)
    public void on(String body) {
        // nothing: the test only watches the consumer's state
    }
}
