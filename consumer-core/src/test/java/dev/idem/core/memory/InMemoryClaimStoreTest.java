package dev.idem.core.memory;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreContract;
import java.time.Clock;
import java.time.Duration;

class InMemoryClaimStoreTest extends ClaimStoreContract {

    @Override
    protected ClaimStore newStore(Duration doneWindow) {
        return new InMemoryClaimStore(Clock.systemUTC(), doneWindow, Duration.ofHours(1));
    }

    @Override
    protected void loseRecord(ClaimAdmin admin, IdempotencyKey key) {
        ((InMemoryClaimStore) admin).lose(key);
    }
}
