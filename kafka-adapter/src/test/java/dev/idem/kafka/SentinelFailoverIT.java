package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.redis.Guards;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.LocalRedisCluster;
import dev.idem.testkit.LocalRedisSentinel;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Assumptions;
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
 * them. Guarded, the business check keeps one effect per order. Redis-only, the orders whose claim
 * writes were lost can run twice, and only those: every doubled order was first applied while
 * replication was held (give or take one short batch), and the count is reported.
 */
@IdemTestKit
class SentinelFailoverIT {

    private static final Logger LOG = LoggerFactory.getLogger(SentinelFailoverIT.class);
    private static final int ORDERS = 3_000;
    private static final Duration HELD = Duration.ofMillis(500);
    /** How far a run can sit from its batch's claim and completion writes (batches of 50, 3 threads). */
    private static final Duration BATCH_SLACK = Duration.ofSeconds(1);

    @BeforeAll
    static void needsRedisServer() {
        boolean required = String.valueOf(System.getenv("IDEM_TESTKIT_REQUIRE")).contains("redis-cluster");
        Assumptions.assumeTrue(required || LocalRedisCluster.available(),
                "redis-server is not on the PATH: no Redis under Sentinel can be started");
    }

    @Test
    void guardedEveryOrderIsAppliedOnceThroughAFailoverThatLostWrites(KafkaBroker kafka, PostgresDatabase postgres,
                                                                      TestNames names) throws Exception {
        Failover failover = stormThroughFailover(kafka, postgres, names, Guards.ON);
        assertThat(failover.lost()).as("orders never applied").isEmpty();
        assertThat(failover.doubled()).as("orders applied twice").isEmpty();
    }

    @Test
    void onRedisAloneOnlyOrdersWhoseWritesWereLostCanBeAppliedTwice(KafkaBroker kafka, PostgresDatabase postgres,
                                                                   TestNames names) throws Exception {
        Failover failover = stormThroughFailover(kafka, postgres, names, Guards.REDIS_ONLY);
        assertThat(failover.lost()).as("orders never applied").isEmpty();
        assertThat(failover.doubled().keySet()).as("doubled orders, all first applied while writes were lost")
                .allSatisfy(order -> assertThat(failover.firstRun(order))
                        .isBetween(failover.heldAt().minus(BATCH_SLACK), failover.killedAt().plus(BATCH_SLACK)));
    }

    @Test
    void withoutClaimAndBusinessCheckTheSameStormAppliesDuplicates(KafkaBroker kafka, PostgresDatabase postgres,
                                                                   TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, null, postgres, names, 6, Guards.OFF)) {
            scenario.handlerDelay(3).produce(ORDERS, 3);
            startConsumers(scenario);
            scenario.awaitDrained(Duration.ofSeconds(120));
            assertThat(scenario.effects()).isGreaterThan(ORDERS);
        }
    }

    /** What one storm through a failover left. */
    record Failover(List<String> orders, Map<String, Integer> effects, Map<String, Instant> firstRuns,
                    Instant heldAt, Instant killedAt) {

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

        Instant firstRun(String order) {
            return firstRuns.get(order);
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
                startConsumers(scenario);
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                        .until(() -> scenario.effects() >= ORDERS / 3);

                Instant heldAt = Instant.now();
                sentinel.holdReplication();
                TimeUnit.MILLISECONDS.sleep(HELD.toMillis());
                Instant killedAt = Instant.now();
                sentinel.killPrimary();
                Duration promotion = sentinel.awaitFailover(Duration.ofSeconds(30));
                long started = System.nanoTime();
                scenario.awaitDrained(Duration.ofSeconds(120));

                Map<String, Integer> effects = scenario.effectsPerOrder();
                Map<String, Instant> firstRuns = new TreeMap<>();
                scenario.invocations.forEach((order, calls) -> firstRuns.put(order, calls.get(0)));
                Failover failover = new Failover(
                        IntStream.range(0, ORDERS).mapToObj(scenario::orderId).toList(), effects, firstRuns, heldAt,
                        killedAt);
                long inWindow = firstRuns.values().stream().filter(at -> !at.isBefore(heldAt.minus(BATCH_SLACK))
                        && !at.isAfter(killedAt.plus(BATCH_SLACK))).count();
                List<Instant> doubledRuns = failover.doubled().keySet().stream().map(firstRuns::get).sorted().toList();
                LOG.info("Sentinel failover mid-storm, guards {}: {} bytes of replication lost in {} ms; replica "
                                + "promoted {} ms after the kill; drained {} ms later; {} orders first run in the "
                                + "lost window -> {} effects for {} orders, {} doubled ({}), {} lost",
                        guards, sentinel.lostReplicationBytes(), HELD.toMillis(), promotion.toMillis(),
                        (System.nanoTime() - started) / 1_000_000, inWindow,
                        effects.values().stream().mapToInt(Integer::intValue).sum(), effects.size(),
                        failover.doubled().size(), doubledRuns.isEmpty() ? "none"
                                : "first run from " + Duration.between(heldAt, doubledRuns.get(0)).toMillis()
                                + " ms after the hold to " + Duration.between(killedAt, doubledRuns.get(
                                        doubledRuns.size() - 1)).toMillis() + " ms after the kill",
                        failover.lost().size());
                assertThat(sentinel.lostReplicationBytes()).as("writes the replica missed").isPositive();
                return failover;
            } finally {
                redisson.shutdown();
            }
        }
    }

    private static void startConsumers(KafkaScenario scenario) {
        // Short batches: a run sits close in time to its batch's claim and completion writes.
        for (int consumer = 0; consumer < 2; consumer++) {
            scenario.startConsumer(3, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50));
        }
    }
}
