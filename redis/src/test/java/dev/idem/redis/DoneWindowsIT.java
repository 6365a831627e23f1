package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.DedupCheck;
import dev.idem.core.EffectLedger;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.RecordingPublisher;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Done keys are kept per mode (decision 0050): a Redis-only processor's for the store's done window,
 * its only dedup window (7 days by default); a processor on a ledger, which remembers effects and
 * dead letters itself, for the guarded done window (an hour by default), at a fraction of the memory.
 */
@IdemTestKit
class DoneWindowsIT {

    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    /** A ledger that has never seen an effect: the processor is guarded, every key runs once. */
    private static final EffectLedger<String> LEDGER = delivery -> false;

    private static Duration doneKeyLives(RedisClaimStore store, TestNames names, DedupCheck<String> check, String key) {
        try (IdempotentProcessor<String> processor = IdempotentProcessor.<String>builder(delivery -> { })
                .group(names.group()).claims(store).dedupCheck(check).deadLetters(new RecordingPublisher())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).build()) {
            Outcome outcome = processor.process(new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(),
                    key.getBytes(StandardCharsets.UTF_8)));
            assertThat(outcome).isInstanceOf(Outcome.Applied.class);
        }
        ClaimRecord record = store.inspect(new IdempotencyKey(names.group(), "orders", key)).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.DONE);
        return record.timeToLive();
    }

    @Test
    void aGuardedProcessorsDoneKeysLiveTheGuardedWindowAndARedisOnlyOnesTheDoneWindow(TestNames names) {
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();

        Duration guarded = doneKeyLives(store, names, LEDGER, "guarded-order");
        Duration redisOnly = doneKeyLives(store, names, DedupCheck.none(), "redis-only-order");

        assertThat(guarded).isLessThanOrEqualTo(Duration.ofHours(1)).isGreaterThan(Duration.ofMinutes(59));
        assertThat(redisOnly).isLessThanOrEqualTo(Duration.ofDays(7)).isGreaterThan(Duration.ofDays(6));
    }

    @Test
    void bothWindowsAreSettable(TestNames names) {
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix())
                .doneWindow(Duration.ofDays(2)).guardedDoneWindow(Duration.ofHours(6)).build();

        assertThat(doneKeyLives(store, names, LEDGER, "guarded-order")).isGreaterThan(Duration.ofHours(5))
                .isLessThanOrEqualTo(Duration.ofHours(6));
        assertThat(doneKeyLives(store, names, DedupCheck.none(), "redis-only-order")).isGreaterThan(Duration.ofDays(1))
                .isLessThanOrEqualTo(Duration.ofDays(2));
        assertThat(store.guarded().orElseThrow().attemptsWindow()).as("failure counts keep their window")
                .isEqualTo(store.attemptsWindow());
    }
}
