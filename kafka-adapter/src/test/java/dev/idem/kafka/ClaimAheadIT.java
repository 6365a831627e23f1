package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.redis.Guards;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Polls claimed ahead of the one running (decision 0047): a copy of a key in the next polls is
 * found done, not sent back busy for a lease, and a rebalance gives the claims of polls claimed
 * ahead back at once, so the partitions' next owner does not find their keys busy. The lease is
 * long (60 s), so a key left busy shows as a drain far slower than the bound.
 */
@IdemTestKit
class ClaimAheadIT {

    private static final Duration LEASE = Duration.ofSeconds(60);
    // Well under the lease: a copy or a handed-over key left busy for a lease cannot drain in time.
    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    /** 600 orders on one partition, each sent again three and seven records later, five records a poll. */
    private int copiesInTheNextPolls(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards)
            throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, guards)) {
            int orders = 600;
            List<byte[]> values = new ArrayList<>();
            for (int i = 0; i < orders + 7; i++) {
                if (i < orders) {
                    values.add(KafkaScenario.json(new Order(scenario.orderId(i), 1)));
                }
                if (i >= 3 && i - 3 < orders) {
                    values.add(KafkaScenario.json(new Order(scenario.orderId(i - 3), 1)));
                }
                if (i >= 7 && i - 7 < orders) {
                    values.add(KafkaScenario.json(new Order(scenario.orderId(i - 7), 1)));
                }
            }
            scenario.lease(LEASE).produceRaw(values);
            scenario.startConsumer(1, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5));
            scenario.awaitDrained(WITHIN);
            return scenario.effects();
        }
    }

    @Test
    void copiesOfAKeyInTheNextPollsAreFoundDoneAndDoNotHoldThePartitionForALease(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(copiesInTheNextPolls(kafka, postgres, names, Guards.ON)).isEqualTo(600);
    }

    @Test
    void inRedisOnlyModeCopiesInTheNextPollsAreAppliedOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(copiesInTheNextPolls(kafka, postgres, names, Guards.REDIS_ONLY)).isEqualTo(600);
    }

    @Test
    void withoutClaimAndBusinessCheckCopiesInTheNextPollsAreAppliedAgain(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(copiesInTheNextPolls(kafka, postgres, names, Guards.OFF)).isGreaterThan(600);
    }

    /** A consumer joins while the first has polls claimed ahead; each then leaves in turn. */
    private int handOver(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards)
            throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 4, guards)) {
            scenario.lease(LEASE).handlerDelay(1);
            scenario.produce(4_000, 2);
            IdemKafkaConsumer<Order> first = scenario.startConsumer(1, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50));
            await().atMost(WITHIN).until(() -> scenario.invocations.size() >= 500);
            IdemKafkaConsumer<Order> second = scenario.startConsumer(1,
                    Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50));
            await().atMost(WITHIN).until(() -> scenario.invocations.size() >= 1_500);
            first.close();
            await().atMost(WITHIN).until(() -> scenario.invocations.size() >= 2_500);
            scenario.startConsumer(1, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50));
            second.close();
            scenario.awaitDrained(WITHIN);
            return scenario.effects();
        }
    }

    @Test
    void partitionsHandedOverWhilePollsAreClaimedAheadAreNotFoundBusyByTheirNextOwner(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(handOver(kafka, postgres, names, Guards.ON)).isEqualTo(4_000);
    }

    @Test
    void inRedisOnlyModeAHandOverWithPollsClaimedAheadAppliesEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(handOver(kafka, postgres, names, Guards.REDIS_ONLY)).isEqualTo(4_000);
    }

    @Test
    void withoutClaimAndBusinessCheckTheHandOverAppliesCopiesAgain(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(handOver(kafka, postgres, names, Guards.OFF)).isGreaterThan(4_000);
    }
}
