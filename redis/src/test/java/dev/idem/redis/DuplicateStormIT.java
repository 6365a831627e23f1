package dev.idem.redis;

import dev.idem.core.RecordingPublisher;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Envelope;
import dev.idem.core.DeliveryHandler;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.jdbc.ThreadConnections;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import dev.idem.redis.TestRedisson;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The invariant users care about: 8 threads deliver the same 1,000 keys 5 times each, concurrently,
 * to a handler that writes a stock movement in PostgreSQL. Exactly 1,000 movements must result.
 */
@IdemTestKit
class DuplicateStormIT {

    private static final int KEYS = 1_000;
    private static final int COPIES = 5;
    private static final int THREADS = 8;

    private static final Logger LOG = LoggerFactory.getLogger(DuplicateStormIT.class);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @Test
    void eachEffectIsAppliedOnceUnderAConcurrentDuplicateStorm(PostgresDatabase postgres, TestNames names)
            throws Exception {
        assertThat(storm(postgres, names, Guards.ON, false)).isEqualTo(KEYS);
    }

    @Test
    void onRedisAloneEachEffectIsAppliedOnceWhileRedisKeepsItsData(PostgresDatabase postgres, TestNames names)
            throws Exception {
        assertThat(storm(postgres, names, Guards.REDIS_ONLY, false)).isEqualTo(KEYS);
    }

    @Test
    void withoutClaimAndBusinessCheckTheSameStormAppliesDuplicates(PostgresDatabase postgres, TestNames names)
            throws Exception {
        assertThat(storm(postgres, names, Guards.OFF, false)).isGreaterThan(KEYS);
    }

    @Test
    void theLedgerStillPreventsEverySecondEffectWhenRedisLosesItsRecordsMidStorm(PostgresDatabase postgres,
                                                                                TestNames names) throws Exception {
        assertThat(storm(postgres, names, Guards.ON, true)).isEqualTo(KEYS);
    }

    /** Runs the storm and returns how many stock movements were written for its keys. */
    private int storm(PostgresDatabase postgres, TestNames names, Guards guards, boolean flushRedisHalfway)
            throws Exception {
        String run = names.topic();
        try (Connection connection = postgres.connect();
             ThreadConnections connections = new ThreadConnections(postgres.jdbcUrl(), postgres.user(),
                     postgres.password())) {
            LedgerFixture.createTables(connection, "postgresql");
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(connections.dataSource()).build();
            DeliveryHandler<String> handler = guards.handler(ledger, connections.dataSource(), (delivery, tx) -> {
                pause();
                LedgerFixture.<String>insertMovement().handle(delivery, tx);
            });
            ClaimStore claims = guards.claims(redisson, names.keyPrefix());
            try (IdempotentProcessor<String> processor = IdempotentProcessor.builder(handler)
                    .group(names.group()).claims(claims)
                    .dedupCheck(guards.dedupCheck(ledger))
                    .deadLetters(new RecordingPublisher()).codec(PayloadCodec.utf8())
                    .keys(KeySource.payload(payload -> payload)).meterRegistry(new SimpleMeterRegistry()).build()) {
                deliver(processor, run, () -> redisson.getKeys().deleteByPattern(names.keyPrefix() + "*"),
                        flushRedisHalfway);
            }
            int movements = LedgerFixture.movementsWithPrefix(connection, run + ":");
            LOG.info("storm with guards {}{}: {} deliveries of {} keys -> {} stock movements", guards,
                    flushRedisHalfway ? " and Redis flushed halfway" : "", KEYS * COPIES, KEYS, movements);
            return movements;
        }
    }

    private void deliver(IdempotentProcessor<String> processor, String run, Runnable flush, boolean flushHalfway)
            throws Exception {
        List<Envelope> deliveries = new ArrayList<>();
        for (int copy = 0; copy < COPIES; copy++) {
            for (int i = 0; i < KEYS; i++) {
                String body = run + ":" + i;
                deliveries.add(new Envelope("orders", i % 4, Integer.toString(copy), body + "#" + copy, 0, Map.of(),
                        body.getBytes(StandardCharsets.UTF_8)));
            }
        }
        Collections.shuffle(deliveries, new Random(42));
        List<Deque<Envelope>> queues = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            queues.add(new ArrayDeque<>());
        }
        for (int i = 0; i < deliveries.size(); i++) {
            queues.get(i % THREADS).add(deliveries.get(i));
        }
        AtomicInteger acknowledged = new AtomicInteger();
        AtomicBoolean flushed = new AtomicBoolean();
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (Deque<Envelope> queue : queues) {
                running.add(threads.submit(() -> {
                    // A broker redelivers what was not acknowledged: here, at the back of the queue.
                    for (int guard = 0; !queue.isEmpty() && guard < 200_000; guard++) {
                        Envelope envelope = queue.poll();
                        if (processor.process(envelope).disposition().acknowledges()) {
                            if (acknowledged.incrementAndGet() == deliveries.size() / 2 && flushHalfway
                                    && flushed.compareAndSet(false, true)) {
                                flush.run();
                            }
                        } else {
                            queue.add(envelope);
                        }
                    }
                    assertThat(queue).as("every delivery acknowledged in the end").isEmpty();
                    return null;
                }));
            }
            for (Future<?> future : running) {
                future.get(3, TimeUnit.MINUTES);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(flushed.get()).isEqualTo(flushHalfway);
    }

    private static void pause() throws InterruptedException {
        // 0-2 ms: long enough for copies on other threads to race the first one.
        TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextInt(2_000));
    }

}
