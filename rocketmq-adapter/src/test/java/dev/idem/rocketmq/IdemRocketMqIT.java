package dev.idem.rocketmq;

import dev.idem.redis.Guards;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.rocketmq.RocketMqScenario.Order;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import dev.idem.redis.TestRedisson;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

@IdemTestKit
class IdemRocketMqIT {

    private static final Logger LOG = LoggerFactory.getLogger(IdemRocketMqIT.class);
    private static final Duration QUIET = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    // 1. Duplicate storm ---------------------------------------------------------------------

    private int storm(RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names, Guards guards)
            throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 4, guards)) {
            scenario.handlerDelay(3);
            scenario.produce(2_000, 3);
            scenario.startConsumer(c -> c.batchSize(8));
            scenario.startConsumer(c -> c.batchSize(8));
            if (guards.on()) {
                await().atMost(TIMEOUT).until(() -> scenario.effects() >= 2_000);
            } else {
                // Unguarded, every one of the 6,000 deliveries runs the handler.
                await().atMost(TIMEOUT).until(() -> scenario.calls() >= 6_000);
            }
            scenario.awaitQuiet(QUIET, TIMEOUT);
            int effects = scenario.effects();
            LOG.info("RocketMQ storm, guards {}: 6,000 messages of 2,000 orders, 2 consumers -> {} effects",
                    guards, effects);
            return effects;
        }
    }

    @Test
    void aDuplicateStormOnTwoConsumersAppliesEachOrderOnce(RocketMqBroker rocketMq, PostgresDatabase postgres,
                                                           TestNames names) throws Exception {
        assertThat(storm(rocketMq, postgres, names, Guards.ON)).isEqualTo(2_000);
    }

    @Test
    void onRedisAloneTheStormAppliesEachOrderOnceWhileRedisKeepsItsData(RocketMqBroker rocketMq, PostgresDatabase postgres,
                                                                        TestNames names) throws Exception {
        assertThat(storm(rocketMq, postgres, names, Guards.REDIS_ONLY)).isEqualTo(2_000);
    }

    @Test
    void withoutClaimAndBusinessCheckTheStormAppliesDuplicates(RocketMqBroker rocketMq, PostgresDatabase postgres,
                                                               TestNames names) throws Exception {
        assertThat(storm(rocketMq, postgres, names, Guards.OFF)).isGreaterThan(2_000);
    }

    // 2. Poison ------------------------------------------------------------------------------

    @Test
    void aPoisonMessageRunsFiveTimesThenGoesToTheDeadLetterTopicOnceWithEveryProperty(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 2, Guards.ON)) {
            String poison = scenario.orderId(3);
            scenario.behaviour((order, invocation, attempt) -> {
                if (order.id().equals(poison)) {
                    throw new IllegalStateException("no such warehouse");
                }
            });
            scenario.produce(10, 1);
            scenario.startConsumer(c -> { });
            await().atMost(TIMEOUT).until(() -> scenario.compensated.size() == 1);
            scenario.awaitQuiet(QUIET, TIMEOUT);

            assertThat(scenario.invocations.get(poison)).hasSize(5);
            assertThat(scenario.effects()).isEqualTo(9);
            assertThat(scenario.compensated).singleElement()
                    .satisfies(d -> assertThat(d.key().value()).isEqualTo(poison));
            List<MessageExt> deadLetters = scenario.deadLetters(Duration.ofSeconds(1));
            assertThat(deadLetters).hasSize(1);
            MessageExt deadLetter = deadLetters.get(0);
            assertThat(deadLetter.getBody()).isEqualTo(RocketMqScenario.json(new Order(poison, 1)));
            assertThat(deadLetter.getProperties())
                    .containsEntry("idem-original-topic", scenario.topic)
                    .containsEntry("idem-consumer-group", scenario.group)
                    .containsEntry("idem-idempotency-key", poison)
                    .containsEntry("idem-attempts", "5")
                    .containsEntry("idem-reason", "attempts exhausted")
                    .containsEntry("idem-exception-class", IllegalStateException.class.getName())
                    .containsEntry("idem-exception-message", "no such warehouse")
                    .containsKeys("idem-original-partition", "idem-original-offset", "idem-original-message-id",
                            "idem-exception-stacktrace", "idem-first-failure-at", "idem-last-failure-at");
        }
    }

    // 3. Transient ---------------------------------------------------------------------------

    @Test
    void aMessageFailingTwiceThenSucceedingIsAppliedOnceWithoutDeadLetter(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 2, Guards.ON)) {
            String flaky = scenario.orderId(1);
            scenario.behaviour((order, invocation, attempt) -> {
                if (order.id().equals(flaky) && invocation <= 2) {
                    throw new IllegalStateException("stock service timeout");
                }
            });
            scenario.produce(5, 1);
            scenario.startConsumer(c -> { });
            await().atMost(TIMEOUT).until(() -> scenario.effects() == 5);
            scenario.awaitQuiet(QUIET, TIMEOUT);

            assertThat(scenario.invocations.get(flaky)).hasSize(3);
            assertThat(scenario.effects()).isEqualTo(5);
            assertThat(scenario.compensated).isEmpty();
            assertThat(scenario.deadLetters(Duration.ofSeconds(1))).isEmpty();
        }
    }

    // 4. Crash -------------------------------------------------------------------------------

    @Test
    void aConsumerShutDownMidFlightAndANewOneApplyEveryOrderOnceAndLoseNone(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(rocketMq, postgres, names, Guards.ON)).isEqualTo(2_000);
    }

    @Test
    void inRedisOnlyModeAConsumerShutDownMidFlightAppliesEveryOrderOnce(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(rocketMq, postgres, names, Guards.REDIS_ONLY)).isEqualTo(2_000);
    }

    @Test
    void withoutClaimAndBusinessCheckAShutDownMidFlightReappliesOrders(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(rocketMq, postgres, names, Guards.OFF)).isGreaterThan(2_000);
    }

    private int crash(RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names, Guards guards)
            throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 4, guards)) {
            scenario.handlerDelay(5);
            scenario.produce(2_000, 1);
            IdemRocketMqConsumer<Order> first = scenario.startConsumer(c -> c.batchSize(4));
            await().atMost(TIMEOUT).until(() -> scenario.calls() >= 500);
            first.consumer().shutdown();

            scenario.startConsumer(c -> c.batchSize(4));
            await().atMost(TIMEOUT).until(() -> scenario.effects() >= 2_000);
            scenario.awaitQuiet(QUIET, TIMEOUT);

            LOG.info("RocketMQ crash, guards {}: 2,000 orders, {} handler calls -> {} effects", guards,
                    scenario.calls(), scenario.effects());
            return scenario.effects();
        }
    }

    // 5. Batches -----------------------------------------------------------------------------

    @Test
    void aFailureInABatchRedeliversOnlyThatMessageAndTheOnesAfterIt(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 1, Guards.ON)) {
            String failing = scenario.orderId(4);
            scenario.behaviour((order, invocation, attempt) -> {
                if (order.id().equals(failing) && invocation == 1) {
                    throw new IllegalStateException("reservation locked");
                }
            });
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                messages.add(scenario.message(RocketMqScenario.json(new Order(scenario.orderId(i), 1)), null));
            }
            scenario.sendToQueue(messages, 0);
            scenario.startConsumer(c -> c.batchSize(10).concurrency(1));
            await().atMost(TIMEOUT).until(() -> scenario.effects() == 10);
            scenario.awaitQuiet(QUIET, TIMEOUT);

            for (int i = 0; i < 4; i++) {
                assertThat(scenario.invocations.get(scenario.orderId(i))).as("message %d: once, never redelivered", i)
                        .containsExactly(1);
            }
            assertThat(scenario.invocations.get(failing)).as("the failed message: redelivered once").hasSize(2);
            for (int i = 5; i < 10; i++) {
                assertThat(scenario.invocations.get(scenario.orderId(i))).as("message %d: only the redelivery runs", i)
                        .singleElement().satisfies(attempt -> assertThat(attempt).isGreaterThan(1));
            }

            // The same ten again: a batch of duplicates is acknowledged without calling the handler.
            int callsBefore = scenario.calls();
            scenario.sendToQueue(messages, 0);
            scenario.awaitQuiet(QUIET, TIMEOUT);
            assertThat(scenario.calls()).isEqualTo(callsBefore);
            assertThat(scenario.effects()).isEqualTo(10);
        }
    }

    // 6. Orderly -----------------------------------------------------------------------------

    @Test
    void anOrderlyQueueHoldsLaterMessagesUntilAFailedOneResolves(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 2, Guards.ON)) {
            String third = scenario.orderId(2);
            scenario.behaviour((order, invocation, attempt) -> {
                if (order.id().equals(third) && invocation <= 2) {
                    throw new IllegalStateException("reservation locked");
                }
            });
            List<Message> messages = new ArrayList<>();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                messages.add(scenario.message(RocketMqScenario.json(new Order(scenario.orderId(i), 1)), null));
                expected.add(scenario.orderId(i));
            }
            scenario.sendToQueue(messages, 1);
            scenario.startConsumer(c -> c.orderly(true));
            await().atMost(TIMEOUT).until(() -> scenario.effects() == 6);

            assertThat(scenario.appliedOrder).containsExactlyElementsOf(expected);
            assertThat(scenario.invocations.get(third)).hasSize(3);
        }
    }

    @Test
    void anOrderlyQueueDeadLettersAPoisonMessageAfterFiveAttemptsAndMovesOn(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 1, Guards.ON)) {
            String poison = scenario.orderId(1);
            scenario.behaviour((order, invocation, attempt) -> {
                if (order.id().equals(poison)) {
                    throw new IllegalStateException("no such warehouse");
                }
            });
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                messages.add(scenario.message(RocketMqScenario.json(new Order(scenario.orderId(i), 1)), null));
            }
            scenario.sendToQueue(messages, 0);
            scenario.startConsumer(c -> c.orderly(true));
            await().atMost(TIMEOUT).until(() -> scenario.effects() == 3);
            scenario.awaitQuiet(QUIET, TIMEOUT);

            assertThat(scenario.invocations.get(poison)).hasSize(5);
            assertThat(scenario.appliedOrder).containsExactly(scenario.orderId(0), scenario.orderId(2),
                    scenario.orderId(3));
            assertThat(scenario.compensated).singleElement()
                    .satisfies(d -> assertThat(d.key().value()).isEqualTo(poison));
            assertThat(scenario.deadLetters(Duration.ofSeconds(1))).hasSize(1);
        }
    }

    // Bad input and the one-line wrapper -----------------------------------------------------

    @Test
    void anUndecodableMessageGoesToTheDeadLetterTopicWithItsReason(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 1, Guards.ON)) {
            scenario.send(List.of(scenario.message("not json at all".getBytes(StandardCharsets.UTF_8), null)));
            scenario.startConsumer(c -> { });
            await().atMost(TIMEOUT).until(() -> scenario.compensated.size() == 1);

            List<MessageExt> deadLetters = scenario.deadLetters(Duration.ofSeconds(1));
            assertThat(deadLetters).singleElement().satisfies(d -> {
                assertThat(new String(d.getBody(), StandardCharsets.UTF_8)).isEqualTo("not json at all");
                assertThat(d.getUserProperty("idem-reason")).startsWith("undecodable payload");
            });
            assertThat(scenario.calls()).isZero();
        }
    }

    @Test
    void anExistingListenerWrappedInOneLineSeesEachKeyOnce(RocketMqBroker rocketMq, PostgresDatabase postgres,
                                                            TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 2, Guards.ON)) {
            Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
            MessageListenerConcurrently existing = (messages, context) -> {
                messages.forEach(m -> seen.computeIfAbsent(m.getKeys(), k -> new AtomicInteger()).incrementAndGet());
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            };
            List<Message> messages = new ArrayList<>();
            for (int copy = 0; copy < 3; copy++) {
                for (int i = 0; i < 100; i++) {
                    messages.add(scenario.message(("payload " + i).getBytes(StandardCharsets.UTF_8),
                            scenario.orderId(i)));
                }
            }
            scenario.send(messages);

            // The system of record of this listener is the map it writes.
            scenario.startWrapped(existing, delivery -> seen.containsKey(delivery.key().value()));
            await().atMost(TIMEOUT).until(() -> seen.size() == 100);
            await().during(QUIET).atMost(TIMEOUT).until(() -> seen.values().stream().allMatch(c -> c.get() == 1));
        }
    }
}
