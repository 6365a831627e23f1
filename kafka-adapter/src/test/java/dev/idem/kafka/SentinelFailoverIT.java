package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.redis.Guards;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.LocalRedisCluster;
import dev.idem.testkit.LocalRedisSentinel;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis failover under Sentinel in the middle of a Kafka duplicate storm: the primary is killed
 * while its last writes have not reached the replica, and the Sentinels promote the replica without
 * them. What the replica holds while replication is held is exactly what the failover keeps, so the
 * test reads it then. Guarded, the business check keeps one effect per order, and is seen to refuse
 * copies Redis no longer knew as done. Redis-only, orders can run twice, and only orders whose done
 * record the failover lost; the count is reported.
 */
@IdemTestKit
class SentinelFailoverIT {

    private static final Logger LOG = LoggerFactory.getLogger(SentinelFailoverIT.class);
    private static final int ORDERS = 3_000;
    private static final Duration HELD = Duration.ofMillis(500);

    @BeforeAll
    static void needsRedisServer() {
        LocalRedisCluster.assumeAvailable();
    }

    @Test
    void guardedEveryOrderIsAppliedOnceThroughAFailoverThatLostWrites(KafkaBroker kafka, PostgresDatabase postgres,
                                                                      TestNames names) throws Exception {
        Failover failover = stormThroughFailover(kafka, postgres, names, Guards.ON);
        assertThat(failover.lost()).as("orders never applied").isEmpty();
        assertThat(failover.doubled()).as("orders applied twice").isEmpty();
        assertThat(failover.refusedByTheCheck()).as("copies Redis had lost as done, refused by the business check")
                .isPositive();
    }

    @Test
    void onRedisAloneOnlyOrdersWhoseWritesWereLostCanBeAppliedTwice(KafkaBroker kafka, PostgresDatabase postgres,
                                                                   TestNames names) throws Exception {
        Failover failover = stormThroughFailover(kafka, postgres, names, Guards.REDIS_ONLY);
        assertThat(failover.lost()).as("orders never applied").isEmpty();
        assertThat(failover.doubled()).as("orders applied twice: the failover lost writes that mattered").isNotEmpty();
        assertThat(failover.doubled().keySet()).as("doubled orders whose done record the promoted replica had")
                .doesNotContainAnyElementsOf(failover.doneOnReplica());
    }

    @Test
    void withoutClaimAndBusinessCheckTheSameStormAppliesDuplicates(KafkaBroker kafka, PostgresDatabase postgres,
                                                                   TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, null, postgres, names, 6, Guards.OFF)) {
            scenario.handlerDelay(3).produce(ORDERS, 3);
            startConsumers(scenario, scenario.processorBuilder());
            scenario.awaitDrained(Duration.ofSeconds(120));
            assertThat(scenario.effects()).isGreaterThan(ORDERS);
        }
    }

    /** What one storm through a failover left. */
    record Failover(List<String> orders, Map<String, Integer> effects, Set<String> doneOnReplica,
                    int refusedByTheCheck) {

        List<String> lost() {
            return orders.stream().filter(order -> !effects.containsKey(order)).toList();
        }

        Map<String, Integer> doubled() {
            Map<String, Integer> doubled = new TreeMap<>();
            effects.forEach((order, count) -> {
                if (count > 1) {
                    doubled.put(order, count);
                }
            });
            return doubled;
        }

    }

    private Failover stormThroughFailover(KafkaBroker kafka, PostgresDatabase postgres, TestNames names,
                                          Guards guards) throws Exception {
        try (LocalRedisSentinel sentinel = LocalRedisSentinel.start(Path.of("target", "idem-testkit", "redis-sentinel"))) {
            Config config = new Config();
            config.useSentinelServers().setMasterName(LocalRedisSentinel.MASTER_NAME)
                    .setSentinelAddresses(sentinel.sentinelAddresses());
            RedissonClient redisson = Redisson.create(config);
            try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 6, guards)) {
                scenario.handlerDelay(3).lease(Duration.ofSeconds(5)).produce(ORDERS, 3);
                AtomicInteger refused = new AtomicInteger();
                startConsumers(scenario, scenario.processorBuilder().onOutcome(outcome -> {
                    if (outcome instanceof Outcome.Duplicate duplicate
                            && duplicate.reason().startsWith("refused by the system of record")) {
                        refused.incrementAndGet();
                    }
                }));
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                        .until(() -> scenario.effects() >= ORDERS / 3);

                Instant heldAt = Instant.now();
                sentinel.holdReplication();
                TimeUnit.MILLISECONDS.sleep(HELD.toMillis());
                // What the replica holds now is what the failover keeps: it receives nothing more.
                Set<String> doneOnReplica = doneOn(sentinel.replicaPort(), scenario, names);
                Instant killedAt = Instant.now();
                sentinel.killPrimary();
                Duration promotion = sentinel.awaitFailover(Duration.ofSeconds(30));
                long started = System.nanoTime();
                scenario.awaitDrained(Duration.ofSeconds(120));

                Map<String, Integer> effects = scenario.effectsPerOrder();
                Map<String, Instant> firstRuns = new TreeMap<>();
                scenario.invocations.forEach((order, calls) -> firstRuns.put(order, calls.get(0)));
                Failover failover = new Failover(IntStream.range(0, ORDERS).mapToObj(scenario::orderId).toList(),
                        effects, doneOnReplica, refused.get());
                Instant promoted = killedAt.plus(promotion);
                long atRisk = firstRuns.entrySet().stream().filter(run -> run.getValue().isBefore(promoted)
                        && !doneOnReplica.contains(run.getKey())).count();
                List<Instant> doubledRuns = failover.doubled().keySet().stream().map(firstRuns::get).sorted().toList();
                LOG.info("Sentinel failover mid-storm, guards {}: {} bytes of replication lost in {} ms held; replica "
                                + "promoted {} ms after the kill; drained {} ms later; {} orders done on the replica "
                                + "and {} run before the promotion but not done there -> {} effects for {} orders, {} doubled ({}), {} lost, "
                                + "{} copies refused by the business check",
                        guards, sentinel.lostReplicationBytes(), Duration.between(heldAt, killedAt).toMillis(),
                        promotion.toMillis(),
                        (System.nanoTime() - started) / 1_000_000, doneOnReplica.size(), atRisk,
                        effects.values().stream().mapToInt(Integer::intValue).sum(), effects.size(),
                        failover.doubled().size(), doubledRuns.isEmpty() ? "none"
                                : "first run from " + Duration.between(heldAt, doubledRuns.get(0)).toMillis()
                                + " ms after the hold to " + Duration.between(killedAt, doubledRuns.get(
                                        doubledRuns.size() - 1)).toMillis() + " ms after the kill",
                        failover.lost().size(), refused.get());
                assertThat(sentinel.lostReplicationBytes()).as("writes the replica missed").isPositive();
                return failover;
            } finally {
                redisson.shutdown();
            }
        }
    }

    private static void startConsumers(KafkaScenario scenario, IdempotentProcessor.Builder<KafkaScenario.Order> processor) {
        // Short batches, so that many complete while replication is held.
        for (int consumer = 0; consumer < 2; consumer++) {
            scenario.start(scenario.consumerBuilder(3, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50), processor));
        }
    }

    /** The orders whose claim record on the server at {@code port} says done. */
    private static Set<String> doneOn(int port, KafkaScenario scenario, TestNames names) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
        RedissonClient replica = Redisson.create(config);
        try {
            RedisClaimStore store = RedisClaimStore.builder(replica).keyPrefix(names.keyPrefix()).build();
            Set<String> done = ConcurrentHashMap.newKeySet();
            // Many at once: the primary keeps writing (and losing) while this reads.
            ExecutorService readers = Executors.newFixedThreadPool(16);
            try {
                List<Future<?>> reads = new ArrayList<>();
                for (int i = 0; i < ORDERS; i++) {
                    String order = scenario.orderId(i);
                    reads.add(readers.submit(() -> store.inspect(new IdempotencyKey(scenario.group, scenario.topic,
                            order)).filter(record -> record.state() == ClaimRecord.State.DONE)
                            .ifPresent(record -> done.add(order))));
                }
                for (Future<?> read : reads) {
                    read.get(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException | ExecutionException | TimeoutException e) {
                throw new IllegalStateException("could not read the replica", e);
            } finally {
                readers.shutdownNow();
            }
            return done;
        } finally {
            replica.shutdown();
        }
    }
}
