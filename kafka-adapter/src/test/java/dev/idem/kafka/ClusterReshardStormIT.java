package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.redis.Guards;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.LocalRedisCluster;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real reshard under load: a Kafka duplicate storm on two consumers, claims in a 3-master Redis
 * Cluster, while the slots holding the live batches move from master to master, their keys migrated
 * a few at a time as {@code redis-cli --cluster reshard} does. Every order is applied once, in
 * guarded and Redis-only mode; the unguarded run shows the count can tell.
 */
@IdemTestKit
class ClusterReshardStormIT {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterReshardStormIT.class);
    private static final int ORDERS = 3_000;
    private static final int COPIES = 3;
    private static final int TAGS = 6;
    private static final Duration DRAIN = Duration.ofSeconds(180);
    private static LocalRedisCluster cluster;
    private static RedissonClient redisson;

    @BeforeAll
    static void startCluster() {
        LocalRedisCluster.assumeAvailable();
        cluster = LocalRedisCluster.start(Path.of("target", "idem-testkit", "redis-cluster"), 3);
        Config config = new Config();
        config.useClusterServers().setNodeAddresses(cluster.nodeAddresses());
        redisson = Redisson.create(config);
    }

    @AfterAll
    static void stopCluster() {
        if (redisson != null) {
            redisson.shutdown();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void everyOrderIsAppliedOnceWhileTheSlotsOfLiveBatchesMove(KafkaBroker kafka, PostgresDatabase postgres,
                                                               TestNames names) throws Exception {
        assertEachOrderOnce(stormDuringReshard(kafka, postgres, names, Guards.ON));
    }

    @Test
    void onRedisAloneEveryOrderIsAppliedOnceWhileTheSlotsOfLiveBatchesMove(KafkaBroker kafka,
                                                                          PostgresDatabase postgres,
                                                                          TestNames names) throws Exception {
        assertEachOrderOnce(stormDuringReshard(kafka, postgres, names, Guards.REDIS_ONLY));
    }

    @Test
    void withoutClaimAndBusinessCheckTheSameStormAppliesDuplicates(KafkaBroker kafka, PostgresDatabase postgres,
                                                                   TestNames names) throws Exception {
        Map<String, Integer> effects = stormDuringReshard(kafka, postgres, names, Guards.OFF);
        assertThat(effects.values().stream().mapToInt(Integer::intValue).sum()).isGreaterThan(ORDERS);
    }

    private static void assertEachOrderOnce(Map<String, Integer> effects) {
        assertThat(effects).as("orders applied").hasSize(ORDERS);
        assertThat(effects).as("orders applied more than once").allSatisfy((order, count) -> assertThat(count).isOne());
    }

    /** Runs the storm while slots move until the group has drained; returns the effects per order. */
    private Map<String, Integer> stormDuringReshard(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards)
            throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 6, guards)) {
            // Orders of one tag hash to one slot, so each poll's keys form compact batches per slot.
            List<byte[]> values = new ArrayList<>();
            Set<String> tags = new LinkedHashSet<>();
            for (int copy = 0; copy < COPIES; copy++) {
                for (int i = 0; i < ORDERS; i++) {
                    String tag = "{" + names + "-t" + (i % TAGS) + "}";
                    tags.add(tag);
                    values.add(KafkaScenario.json(new Order(scenario.orderId(i) + tag, 1)));
                }
            }
            scenario.handlerDelay(4);
            scenario.produceRaw(values);
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            Reshard reshard = new Reshard(tags.stream().map(tag -> cluster.slotOf(names.keyPrefix() + tag)).toList());
            long started = System.nanoTime();
            CompletableFuture<Void> moving = CompletableFuture.runAsync(reshard::run);
            int movesBefore;
            int movesDuring;
            try {
                movesBefore = reshard.moves;
                for (int consumer = 0; consumer < 2; consumer++) {
                    scenario.start(scenario.consumerBuilder(3, Map.of(),
                            scenario.processorBuilder().meterRegistry(meters)));
                }
                scenario.awaitDrained(DRAIN);
                movesDuring = reshard.moves - movesBefore;
            } finally {
                reshard.stop.set(true);
                moving.get(60, TimeUnit.SECONDS);
            }
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            Timer claims = meters.find("idem.claim").timer();
            Map<String, Integer> effects = scenario.effectsPerOrder();
            LOG.info("Kafka storm during a reshard, guards {}: {} records of {} orders in {} ms, {} slot moves "
                            + "({} keys migrated); claim calls {}, longest {} ms, mean {} ms -> {} effects",
                    guards, ORDERS * COPIES, ORDERS, tookMillis, movesDuring, reshard.migrated,
                    claims == null ? 0 : claims.count(),
                    claims == null ? 0 : (long) claims.max(TimeUnit.MILLISECONDS),
                    claims == null ? 0 : String.format("%.2f", claims.mean(TimeUnit.MILLISECONDS)),
                    effects.values().stream().mapToInt(Integer::intValue).sum());
            if (guards.claims()) {
                assertThat(movesDuring).as("slot moves finished while the consumers ran").isGreaterThanOrEqualTo(2);
                assertThat(reshard.migrated).as("keys moved under live claims").isPositive();
            }
            return effects;
        }
    }

    /**
     * Moves the given slots round the masters, one at a time, until stopped: the target imports the
     * slot, the source migrates it, its keys go over 20 at a time with a pause between, and the slot
     * is handed over once the source holds none of its keys.
     */
    private static final class Reshard implements Runnable {
        final AtomicBoolean stop = new AtomicBoolean();
        final Map<Integer, Integer> owners = new HashMap<>();
        final List<Integer> slots;
        volatile int moves;
        volatile int migrated;

        Reshard(List<Integer> slots) {
            this.slots = slots.stream().distinct().toList();
            this.slots.forEach(slot -> owners.put(slot, cluster.ownerOf(slot)));
        }

        @Override
        public void run() {
            try {
                for (int round = 0; !stop.get(); round++) {
                    int slot = slots.get(round % slots.size());
                    int from = owners.get(slot);
                    int to = (from + 1) % 3;
                    cluster.beginMigration(slot, from, to);
                    List<String> keys = cluster.keysInSlot(from, slot);
                    while (!keys.isEmpty()) {
                        for (int at = 0; at < keys.size(); at += 20) {
                            List<String> some = keys.subList(at, Math.min(keys.size(), at + 20));
                            cluster.migrate(from, to, some.toArray(String[]::new));
                            migrated += some.size();
                            TimeUnit.MILLISECONDS.sleep(25);
                        }
                        keys = cluster.keysInSlot(from, slot);
                    }
                    cluster.finishMigration(slot, to);
                    owners.put(slot, to);
                    moves++;
                    TimeUnit.MILLISECONDS.sleep(200);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
