package dev.idem.kafka.share;

import dev.idem.core.ConsumerState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Outcome;
import dev.idem.kafka.share.ShareScenario.Order;
import dev.idem.redis.Guards;
import dev.idem.redis.OwnRedisServer;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The invariants of the share consumer on the test kit's broker, Redis and PostgreSQL: duplicates
 * applied once by four members reading two partitions (guarded, Redis-only, and unguarded to show
 * the oracle can fail), a poison record dead-lettered by Idem before the broker's delivery limit, a
 * limit without room refused at start, a Redis outage that spends no delivery, and a handler longer
 * than the record lock.
 */
@IdemTestKit
class IdemKafkaShareConsumerIT {

    private static final Duration SETTLE = Duration.ofSeconds(90);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    // 1. Duplicate storm: four members, two partitions, every order three times ------------------

    private int storm(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards) throws Exception {
        int orders = 300;
        try (ShareScenario scenario = new ShareScenario(kafka, postgres, names, 2, guards, 10)) {
            scenario.handlerDelay(3);
            scenario.produce(orders, 3);
            for (int i = 0; i < 4; i++) {
                scenario.start(scenario.builder(redisson, 4));
            }
            scenario.awaitSettled(SETTLE);
            return scenario.effects();
        }
    }

    @Test
    void fourMembersApplyEveryOrderOnceWhenEachArrivesThreeTimes(KafkaBroker kafka, PostgresDatabase postgres,
                                                                  TestNames names) throws Exception {
        assertThat(storm(kafka, postgres, names, Guards.ON)).isEqualTo(300);
    }

    @Test
    void withRedisAloneFourMembersApplyEveryOrderOnce(KafkaBroker kafka, PostgresDatabase postgres, TestNames names)
            throws Exception {
        assertThat(storm(kafka, postgres, names, Guards.REDIS_ONLY)).isEqualTo(300);
    }

    @Test
    void withTheGuardsOffTheCopiesAreAppliedAgain(KafkaBroker kafka, PostgresDatabase postgres, TestNames names)
            throws Exception {
        // Copies that land in one poll are still run once by their batch; the others are not.
        assertThat(storm(kafka, postgres, names, Guards.OFF)).isGreaterThan(300);
    }

    // 2. Poison: Idem's dead letter comes before the broker's limit -------------------------------

    @Test
    void aPoisonRecordRunsFiveTimesAndIsDeadLetteredOnceBeforeTheBrokerArchivesIt(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        // The tightest limit Idem accepts: maxAttempts (5) + 2.
        try (ShareScenario scenario = new ShareScenario(kafka, postgres, names, 2, Guards.ON, 7)) {
            String poison = scenario.orderId(666);
            scenario.behaviour((order, invocation) -> {
                if (order.id().equals(poison)) {
                    throw new IllegalStateException("cannot apply " + order.id());
                }
            });
            List<String> ids = new ArrayList<>(List.of(poison));
            for (int i = 0; i < 20; i++) {
                ids.add(scenario.orderId(i));
            }
            scenario.produceIds(ids);
            scenario.start(scenario.builder(redisson, 2));
            scenario.start(scenario.builder(redisson, 2));
            scenario.awaitSettled(SETTLE);

            assertThat(scenario.calls(poison)).isEqualTo(5);
            assertThat(scenario.effects()).isEqualTo(20);
            assertThat(scenario.compensated).hasSize(1);
            List<ConsumerRecord<byte[], byte[]>> letters = scenario.readAll(scenario.topic + ".DLT");
            assertThat(letters).hasSize(1);
            assertThat(new String(letters.get(0).value(), StandardCharsets.UTF_8)).contains(poison);
            assertThat(new String(letters.get(0).headers().lastHeader("idem-attempts").value(), StandardCharsets.UTF_8))
                    .isEqualTo("5");
        }
    }

    @Test
    void aDeliveryLimitWithoutRoomForIdemsAttemptsIsRefusedAtStartNamingTheSetting(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (ShareScenario scenario = new ShareScenario(kafka, postgres, names, 1, Guards.ON, 6)) {
            IdemKafkaShareConsumer<Order> consumer = scenario.builder(redisson, 1).build();
            try {
                assertThatThrownBy(consumer::start).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("share.delivery.count.limit of share group '" + scenario.group
                                + "' is 6 but must be >= maxAttempts + 2 = 7");
                assertThat(consumer.state()).isEqualTo(ConsumerState.NEW);
            } finally {
                consumer.close();
            }
        }
    }

    /**
     * The group's delivery limit is dynamic: lowered while the consumer runs, below Idem's attempts
     * (an operator's mistake, logged as an error), Idem must still know which delivery is the last,
     * hold the record there and dead-letter it itself; a stale limit released it on its last
     * delivery and the broker archived it, with no dead letter and no compensation.
     */
    @Test
    void aDeliveryLimitLoweredWhileRunningIsReadAgainAndThePoisonIsStillDeadLettered(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (ShareScenario scenario = new ShareScenario(kafka, postgres, names, 1, Guards.ON, 7)) {
            String poison = scenario.orderId(666);
            scenario.behaviour((order, invocation) -> {
                if (order.id().equals(poison)) {
                    throw new IllegalStateException("cannot apply " + order.id());
                }
            });
            scenario.start(scenario.builder(redisson, 1).deliveryLimitRefresh(Duration.ofMillis(500)));
            scenario.configureGroup(java.util.Map.of("share.delivery.count.limit", "3"));
            TimeUnit.SECONDS.sleep(3);   // six refreshes

            scenario.produceIds(List.of(poison, scenario.orderId(1)));
            scenario.awaitSettled(SETTLE);

            assertThat(scenario.effects()).isEqualTo(1);
            assertThat(scenario.readAll(scenario.topic + ".DLT")).as("dead letters").hasSize(1);
            assertThat(scenario.compensated).hasSize(1);
            assertThat(scenario.calls(poison)).isEqualTo(5);
            assertThat(scenario.deliveryCounts).as("no delivery after the limit").allMatch(count -> count <= 3);
        }
    }

    // 3. Redis outage: records are held, not released, and all applied once after ---------------

    @Test
    void aRedisOutageSpendsNoDeliveryAndEveryOrderIsAppliedOnceAfterIt(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (OwnRedisServer redis = OwnRedisServer.start();
             ShareScenario scenario = new ShareScenario(kafka, postgres, names, 2, Guards.ON, 7)) {
            RedissonClient client = redis.client();
            try {
                scenario.start(scenario.builder(client, 2));
                redis.down();
                scenario.produce(30, 2);
                // Longer than the limit's worth of releases would last: 7 deliveries would be spent in
                // well under a second if deferred records were released.
                await().pollDelay(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(9)).until(() -> true);
                assertThat(scenario.invocations).isEmpty();
                redis.up();
                scenario.awaitSettled(SETTLE);
                assertThat(scenario.effects()).isEqualTo(30);
                // Every run happened on the record's first delivery: the outage spent none.
                assertThat(scenario.deliveryCounts).isNotEmpty().allMatch(count -> count == 1);
                assertThat(scenario.compensated).isEmpty();
                assertThat(scenario.readAll(scenario.topic + ".DLT")).isEmpty();
            } finally {
                scenario.close();
                client.shutdown();
            }
        }
    }

    // 4. A handler longer than the record lock keeps it by renewal ------------------------------

    @Test
    void aHandlerLongerThanTheRecordLockKeepsItAndRunsOnce(KafkaBroker kafka, PostgresDatabase postgres,
                                                           TestNames names) throws Exception {
        try (ShareScenario scenario = new ShareScenario(kafka, postgres, names, 1, Guards.REDIS_ONLY, 7)) {
            String slow = scenario.orderId(0);
            AtomicBoolean slept = new AtomicBoolean();
            scenario.behaviour((order, invocation) -> {
                if (order.id().equals(slow) && slept.compareAndSet(false, true)) {
                    // Past the lock (15 s): without renewal the broker hands the record to the other member.
                    TimeUnit.MILLISECONDS.sleep(ShareScenario.LOCK_MS + 5_000);
                }
            });
            scenario.produceIds(List.of(slow));
            IdemKafkaShareConsumer<Order> first = scenario.start(scenario.builder(redisson, 1));
            await().atMost(Duration.ofSeconds(30)).until(() -> scenario.calls(slow) == 1);
            scenario.start(scenario.builder(redisson, 1));
            scenario.awaitSettled(Duration.ofSeconds(60));

            assertThat(scenario.calls(slow)).isEqualTo(1);
            assertThat(scenario.effects()).isEqualTo(1);
            // Renewed, the record never reached the other member (which would have found it busy).
            assertThat(scenario.outcomes).noneMatch(outcome -> outcome instanceof Outcome.Busy);
            assertThat(scenario.outcomes).hasSize(1);
            assertThat(first.state()).isEqualTo(ConsumerState.RUNNING);
        }
    }
}
