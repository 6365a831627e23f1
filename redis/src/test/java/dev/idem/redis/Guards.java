package dev.idem.redis;

import dev.idem.core.DedupCheck;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.NoClaimStore;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.TransactionalHandler;
import dev.idem.core.spi.ClaimStore;
import java.sql.Connection;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;

/**
 * The three ways the invariant tests run Idem: {@link #ON} (Redis claims, and the ledger as business
 * check in the effect's transaction: one effect per key whatever happens), {@link #REDIS_ONLY}
 * (Redis claims, no business check: one effect per key while Redis keeps its data) and {@link #OFF}
 * (no claims, no check, the effect written alone), which shows the oracle catches duplicates.
 *
 * @param claims whether keys are claimed in Redis
 * @param check  whether the ledger checks and records effects
 */
public record Guards(boolean claims, boolean check) {

    public static final Guards ON = new Guards(true, true);
    public static final Guards REDIS_ONLY = new Guards(true, false);
    public static final Guards OFF = new Guards(false, false);

    /** Whether any protection is on. */
    public boolean on() {
        return claims || check;
    }

    public ClaimStore claims(RedissonClient redisson, String keyPrefix) {
        return claims ? RedisClaimStore.builder(redisson).keyPrefix(keyPrefix).build() : new NoClaimStore();
    }

    public <T> DedupCheck<? super T> dedupCheck(JdbcEffectLedger ledger) {
        return check ? ledger : DedupCheck.none();
    }

    /** The effect, recorded in the ledger's transaction when checked, written on its own otherwise. */
    public <T> DeliveryHandler<T> handler(JdbcEffectLedger ledger, DataSource dataSource, TransactionalHandler<T> effect) {
        if (check) {
            return ledger.transactional(effect);
        }
        return delivery -> {
            try (Connection connection = dataSource.getConnection()) {
                effect.handle(delivery, connection);
            }
        };
    }

    @Override
    public String toString() {
        return check ? "on" : claims ? "Redis-only" : "off";
    }
}
