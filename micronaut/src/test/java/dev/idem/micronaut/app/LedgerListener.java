package dev.idem.micronaut.app;

import dev.idem.micronaut.IdempotentListener;
import io.micronaut.context.annotation.Requires;
import jakarta.inject.Singleton;

/** A listener that wants the ledger (the default), for start-up checks of how its DataSource is chosen. */
@Singleton
@Requires(property = "test.ledger.topic")
public class LedgerListener {

    @IdempotentListener(name = "ledger-orders", topic = "${test.ledger.topic}", group = "${test.ledger.group}", key = "id")
    public void onOrder(Order order) {
        // The start-up is what is tested; no record is ever consumed.
    }
}
