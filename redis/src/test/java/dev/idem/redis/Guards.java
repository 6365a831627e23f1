package dev.idem.redis;

import dev.idem.core.NoClaimStore;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.TransactionalHandler;
import dev.idem.redis.RedisClaimStore;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.DedupCheck;
import java.sql.Connection;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;

/**
 * Idem's protection switched on (Redis claims, the ledger as business check and in the effect's
 * transaction) or off (no claims, no check, the effect written alone): the invariant tests run
 * both, to show their oracle catches duplicates.
 *
 * @param on whether the protection is on
 */
public record Guards(boolean on) {

    public static final Guards ON = new Guards(true);
    public static final Guards OFF = new Guards(false);

    public ClaimStore claims(RedissonClient redisson, String keyPrefix) {
        return on ? RedisClaimStore.builder(redisson).keyPrefix(keyPrefix).build() : new NoClaimStore();
    }

    public <T> DedupCheck<? super T> dedupCheck(JdbcEffectLedger ledger) {
        return on ? ledger : DedupCheck.none();
    }

    /** The effect, recorded in the ledger's transaction when on, written on its own when off. */
    public <T> DeliveryHandler<T> handler(JdbcEffectLedger ledger, DataSource dataSource, TransactionalHandler<T> effect) {
        if (on) {
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
        return on ? "on" : "off";
    }
}
