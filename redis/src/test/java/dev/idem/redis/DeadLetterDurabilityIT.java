package dev.idem.redis;

import dev.idem.core.spi.CompensationOutcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.NonRetryableException;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.RecordingPublisher;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Dead letters and compensations happen once, across crashes and a Redis that loses its records. */
@IdemTestKit
class DeadLetterDurabilityIT {

    private static final Duration LEASE = Duration.ofMillis(500);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    private static Envelope envelope(String body) {
        return new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aCompensationCutOffByACrashRunsExactlyOnceAfterTheRestart(TestNames names) {
        // Given a consumer that dies inside the compensation hook of a poison message
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        RecordingPublisher deadLetters = new RecordingPublisher();
        List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
        IdempotentProcessor<String> crashing = processor(store, names, deadLetters, letter -> {
            throw new InternalError("killed between the dead letter and its compensation");
        });
        try {
            crashing.process(envelope("order-1"));
        } catch (InternalError killed) {
            crashing.close();
        }
        IdempotencyKey key = new IdempotencyKey(names.group(), "orders", "order-1");
        assertThat(store.inspect(key).orElseThrow().compensation()).contains(CompensationOutcome.PENDING);

        // When the restarted consumer (and a second one) receive redeliveries of the message
        IdempotentProcessor<String> restarted = processor(store, names, deadLetters, compensated::add);
        IdempotentProcessor<String> another = processor(store, names, deadLetters, compensated::add);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Outcome outcome = restarted.process(envelope("order-1"));
            // Busy while the dead consumer's compensation lease runs out, then taken over
            assertThat(outcome).isInstanceOfAny(Outcome.Busy.class, Outcome.DeadLettered.class);
            return !compensated.isEmpty();
        });
        for (int i = 0; i < 5; i++) {
            assertThat(another.process(envelope("order-1"))).isInstanceOf(Outcome.DeadLettered.class);
            assertThat(restarted.process(envelope("order-1"))).isInstanceOf(Outcome.DeadLettered.class);
        }

        // Then the compensation ran exactly once, with the original reason, and the handler never again
        assertThat(compensated).singleElement().satisfies(letter ->
                assertThat(letter.reason()).isEqualTo("non-retryable failure"));
        assertThat(deadLetters.published()).hasSize(1);
        assertThat(store.inspect(key).orElseThrow().compensation()).contains(CompensationOutcome.OK);
        restarted.close();
        another.close();
    }

    @Test
    void withTheLedgerARedisLossNeverRepeatsADeadLetterOrItsCompensation(PostgresDatabase postgres, TestNames names)
            throws Exception {
        // Given a poison message dead-lettered and compensated in guarded mode
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(),
                postgres.password())).build();
        RecordingPublisher deadLetters = new RecordingPublisher();
        List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
        AtomicInteger runs = new AtomicInteger();
        IdempotentProcessor<String> processor = ledger.<String>processor((d, tx) -> {
                    runs.incrementAndGet();
                    throw new NonRetryableException("unknown product");
                }).group(names.group()).claims(store).deadLetters(deadLetters).codec(PayloadCodec.utf8())
                .keys(KeySource.payload(p -> p)).compensation(compensated::add).lease(LEASE).build();
        String order = names.topic() + "-order";
        assertThat(processor.process(envelope(order))).isInstanceOf(Outcome.DeadLettered.class);

        // When Redis loses the key's record and the message is delivered again
        store.reset(new IdempotencyKey(names.group(), "orders", order));
        Outcome again = processor.process(envelope(order));

        // Then the ledger remembers it: no second run, dead letter or compensation
        assertThat(again.disposition().acknowledges()).isTrue();
        assertThat(runs).hasValue(1);
        assertThat(deadLetters.published()).hasSize(1);
        assertThat(compensated).hasSize(1);
        processor.close();
    }

    @Test
    void withTheLedgerARedisLossBetweenTheDeadLetterAndItsCompensationStillCompensatesOnce(
            PostgresDatabase postgres, TestNames names) throws Exception {
        // Given a poison message whose dead letter is published in guarded mode, and Redis losing the
        // key's record while the broker acknowledges the letter (before the key is marked dead)
        RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(),
                postgres.password())).build();
        String order = names.topic() + "-order";
        IdempotencyKey key = new IdempotencyKey(names.group(), "orders", order);
        RecordingPublisher deadLetters = new RecordingPublisher();
        List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
        AtomicInteger runs = new AtomicInteger();
        IdempotentProcessor<String> processor = ledger.<String>processor((d, tx) -> {
                    runs.incrementAndGet();
                    throw new NonRetryableException("unknown product");
                }).group(names.group()).claims(store).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(letter -> {
                    deadLetters.publish(letter);
                    store.reset(key);
                })
                .compensation(compensated::add).lease(LEASE).build();
        Outcome first = processor.process(envelope(order));

        // When the message is delivered again, and again after Redis loses the record once more
        Outcome again = processor.process(envelope(order));
        store.reset(key);
        Outcome third = processor.process(envelope(order));

        // Then the first delivery is not acknowledged (its claim was lost before the compensation),
        // the compensation runs once, and the handler and the dead letter never again
        assertThat(first).isInstanceOf(Outcome.Deferred.class);
        assertThat(again).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(third).isInstanceOf(Outcome.Duplicate.class);
        assertThat(compensated).hasSize(1);
        assertThat(compensated.get(0).key()).isEqualTo(key);
        assertThat(runs).hasValue(1);
        assertThat(deadLetters.published()).hasSize(1);
        processor.close();
    }

    private static IdempotentProcessor<String> processor(RedisClaimStore store, TestNames names,
                                                         RecordingPublisher deadLetters, Compensation compensation) {
        return IdempotentProcessor.<String>builder(d -> {
                    throw new NonRetryableException("unknown product");
                }).group(names.group()).claims(store).dedupCheck(dev.idem.core.DedupCheck.none())
                .deadLetters(deadLetters).codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .compensation(compensation).lease(LEASE).build();
    }
}
