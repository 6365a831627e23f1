package dev.idem.micronaut.app;

import dev.idem.micronaut.IdempotentListener;
import dev.idem.micronaut.KeyFrom;
import io.micronaut.context.annotation.Requires;
import jakarta.inject.Singleton;

/**
 * A Redis-only listener whose consumer the health test stops; a body {@code slow} takes four
 * seconds (the shutdown test stops the application meanwhile), and a body {@code unreachable} meets
 * infrastructure trouble every time (deferred, then stuck).
 */
@Singleton
@Requires(property = "test.health.topic")
public class HealthListener {

    private final Effects effects;

    public HealthListener(Effects effects) {
        this.effects = effects;
    }

    @IdempotentListener(name = "health-orders", topic = "${test.health.topic}", group = "${test.health.group}",
            keySource = KeyFrom.MESSAGE_ID, ledger = false)
    public void on(String body) throws InterruptedException, java.net.ConnectException {
        effects.call("health", body);
        if (body.equals("slow")) {
            Thread.sleep(4_000);
        }
        if (body.equals("unreachable")) {
            throw new java.net.ConnectException("the payment host refuses connections");   // infrastructure
        }
    }
}
