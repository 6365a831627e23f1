package example.readme;

// tag::replay[]
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimAdmin;
// end::replay[]
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.redis.RedisClaimStore;
import java.sql.SQLException;

/** docs/guide/failures.md, "Replaying a dead letter". */
final class ReplayADeadLetter {

    void run(RedisClaimStore claims, JdbcEffectLedger ledger) throws SQLException {
        // tag::replay[]
        ClaimAdmin admin = claims;                                   // RedisClaimStore is also the operator's side
        admin.deadKeys("inventory", 100);                            // what is dead, with reason and compensation
        admin.pendingCompensations("inventory", 100);                // compensations a crash cut off
        admin.reset(new IdempotencyKey("inventory", "orders", "order-42:deduct"));
        ledger.forgetDeadLetter(new IdempotencyKey("inventory", "orders", "order-42:deduct"));   // guarded mode
        // end::replay[]
    }
}
