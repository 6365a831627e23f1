package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.api.RedissonClient;

/** {@code idem claims reset} has the guards {@code dlq replay} has: a running key, a pending compensation. */
@IdemTestKit
class ClaimsResetIT {

    @Test
    void aRunningKeyAndAPendingCompensationAreResetOnlyWithForce(RedisEndpoint redis, TestNames names,
                                                                  @TempDir Path home) {
        RedissonClient redisson = TestRedisson.connect(redis);
        try {
            RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
            IdempotencyKey running = new IdempotencyKey(names.group(), "orders", "order-1");
            IdempotencyKey compensating = new IdempotencyKey(names.group(), "orders", "order-2");
            store.claim(List.of(new ClaimRequest(running, 0), new ClaimRequest(compensating, 0)), "worker-1",
                    Duration.ofMinutes(5));
            assertThat(store.deadLetter(compensating, "worker-1", Duration.ofMinutes(5))).isTrue();
            Operator operator = new Operator(Map.of("IDEM_REDIS_URL", redis.uri().toString(),
                    "IDEM_KEY_PREFIX", names.keyPrefix()), home);

            // When the operator resets each without --force
            Operator.Run first = operator.idem("claims", "reset", names.group(), "order-1", "-t", "orders", "--yes");
            Operator.Run second = operator.idem("claims", "reset", names.group(), "order-2", "-t", "orders", "--yes");

            // Then both are refused, saying why, and kept
            assertThat(first.code()).as(first.toString()).isEqualTo(Idem.SOME_FAILED);
            assertThat(first.err()).contains("refused", "it is running (owner worker-1)", "--force");
            assertThat(second.code()).as(second.toString()).isEqualTo(Idem.SOME_FAILED);
            assertThat(second.err()).contains("its compensation is pending");
            assertThat(store.inspect(running).map(ClaimRecord::state)).contains(ClaimRecord.State.CLAIMED);
            assertThat(store.inspect(compensating).map(ClaimRecord::state)).contains(ClaimRecord.State.DEAD);

            // And with --force they are reset
            Operator.Run forced = operator.idem("claims", "reset", names.group(), "order-1", "-t", "orders", "--yes",
                    "--force");
            assertThat(forced.code()).as(forced.toString()).isZero();
            assertThat(store.inspect(running)).isEmpty();
            // and without a ledger connection the operator is told what a guarded consumer's ledger keeps
            assertThat(forced.out()).contains("note: no --jdbc-url", "ledger still knows a dead key");
        } finally {
            redisson.shutdown();
        }
    }
}
