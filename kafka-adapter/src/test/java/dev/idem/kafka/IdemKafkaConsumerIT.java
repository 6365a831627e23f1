package dev.idem.kafka;

import dev.idem.redis.Guards;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.KeySource;
import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import dev.idem.redis.TestRedisson;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

@IdemTestKit
class IdemKafkaConsumerIT {

    private static final Logger LOG = LoggerFactory.getLogger(IdemKafkaConsumerIT.class);
    private static final Duration DRAIN = Duration.ofSeconds(120);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    /**
     * Thrown by a handler to stand for the process dying in it: a JVM error, the kind the consumer
     * stops on (other errors are the record's failure).
     */
    static final class Crash extends VirtualMachineError {
        private static final long serialVersionUID = 1L;
    }

    // 1. Duplicate storm ---------------------------------------------------------------------

    private int storm(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 6, guards)) {
            scenario.handlerDelay(5);
            scenario.produce(5_000, 3);
            long started = System.nanoTime();
            scenario.startConsumer(3);
            scenario.startConsumer(3);
            scenario.awaitDrained(DRAIN);
            int effects = scenario.effects();
            LOG.info("Kafka storm, guards {}: 15,000 records of 5,000 orders, 2 consumers -> {} effects in {} ms",
                    guards, effects, (System.nanoTime() - started) / 1_000_000);
            return effects;
        }
    }

    @Test
    void aDuplicateStormOnTwoConsumersAppliesEachOrderOnce(KafkaBroker kafka, PostgresDatabase postgres,
                                                           TestNames names) throws Exception {
        assertThat(storm(kafka, postgres, names, Guards.ON)).isEqualTo(5_000);
    }

    @Test
    void onRedisAloneTheStormAppliesEachOrderOnceWhileRedisKeepsItsData(KafkaBroker kafka, PostgresDatabase postgres,
                                                                        TestNames names) throws Exception {
        assertThat(storm(kafka, postgres, names, Guards.REDIS_ONLY)).isEqualTo(5_000);
    }

    @Test
    void withoutClaimAndBusinessCheckTheStormAppliesDuplicates(KafkaBroker kafka, PostgresDatabase postgres,
                                                               TestNames names) throws Exception {
        assertThat(storm(kafka, postgres, names, Guards.OFF)).isGreaterThan(5_000);
    }

    // 2. Poison ------------------------------------------------------------------------------

    @Test
    void aPoisonMessageRunsFiveTimesThenGoesToTheDeadLetterTopicOnceAndThePartitionMovesOn(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String poison = scenario.orderId(7);
            scenario.behaviour((order, invocation) -> {
                if (order.id().equals(poison)) {
                    throw new IllegalStateException("no such warehouse");
                }
            });
            scenario.produce(20, 1);
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            assertThat(scenario.invocations.get(poison)).hasSize(5);
            assertThat(scenario.effects()).isEqualTo(19);
            assertThat(scenario.compensated).singleElement()
                    .satisfies(d -> assertThat(d.key().value()).isEqualTo(poison));
            List<ConsumerRecord<byte[], byte[]>> deadLetters = scenario.readAll(scenario.topic + ".DLT");
            assertThat(deadLetters).hasSize(1);
            ConsumerRecord<byte[], byte[]> deadLetter = deadLetters.get(0);
            assertThat(new String(deadLetter.key(), StandardCharsets.UTF_8)).isEqualTo(poison);
            assertThat(deadLetter.value()).isEqualTo(KafkaScenario.json(new Order(poison, 1)));
            Map<String, String> headers = headers(deadLetter);
            assertThat(headers).containsEntry("idem-original-topic", scenario.topic)
                    .containsEntry("idem-original-partition", "0")
                    .containsEntry("idem-original-offset", "7")
                    .containsEntry("idem-consumer-group", scenario.group)
                    .containsEntry("idem-idempotency-key", poison)
                    .containsEntry("idem-attempts", "5")
                    .containsEntry("idem-reason", "attempts exhausted")
                    .containsEntry("idem-exception-class", IllegalStateException.class.getName())
                    .containsEntry("idem-exception-message", "no such warehouse")
                    .containsKeys("idem-exception-stacktrace", "idem-first-failure-at", "idem-last-failure-at");
            assertThat(Instant.parse(headers.get("idem-first-failure-at")))
                    .isBefore(Instant.parse(headers.get("idem-last-failure-at")));
        }
    }

    private static Map<String, String> headers(ConsumerRecord<byte[], byte[]> record) {
        Map<String, String> headers = new HashMap<>();
        for (Header header : record.headers()) {
            assertThat(headers).as("header %s appears once", header.key()).doesNotContainKey(header.key());
            headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
        }
        return headers;
    }

    // 3. Transient ---------------------------------------------------------------------------

    @Test
    void aMessageFailingTwiceThenSucceedingIsAppliedOnceWithRetriesSpacedByTheBackoff(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String flaky = scenario.orderId(3);
            Duration backoff = Duration.ofMillis(400);
            scenario.backoff(backoff).behaviour((order, invocation) -> {
                if (order.id().equals(flaky) && invocation <= 2) {
                    throw new IllegalStateException("stock service timeout");
                }
            });
            scenario.produce(10, 1);
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            List<Instant> calls = scenario.invocations.get(flaky);
            assertThat(calls).hasSize(3);
            for (int i = 1; i < calls.size(); i++) {
                assertThat(Duration.between(calls.get(i - 1), calls.get(i))).isGreaterThanOrEqualTo(backoff);
            }
            assertThat(scenario.effects()).isEqualTo(10);
            assertThat(scenario.compensated).isEmpty();
            assertThat(scenario.readAll(scenario.topic + ".DLT")).isEmpty();
        }
    }

    // 4. Crash -------------------------------------------------------------------------------

    private int crash(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards) throws Exception {
        return crash(kafka, postgres, names, guards, Map.of());
    }

    private int crash(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards,
                      Map<String, Object> protocol) throws Exception {
        Map<String, Object> settings = new HashMap<>(protocol);
        settings.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100);
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 2, guards)) {
            AtomicBoolean crashed = new AtomicBoolean();
            String victim = scenario.orderId(650);
            scenario.lease(Duration.ofSeconds(2)).behaviour((order, invocation) -> {
                if (order.id().equals(victim) && crashed.compareAndSet(false, true)) {
                    throw new Crash();
                }
            });
            scenario.produce(1_000, 1);
            IdemKafkaConsumer<Order> first = scenario.startConsumer(1, settings);
            await().atMost(DRAIN).until(() -> !first.isRunning());
            assertThat(first.failure()).isInstanceOf(Crash.class);

            scenario.startConsumer(1, settings);
            scenario.awaitDrained(DRAIN);
            int effects = scenario.effects();
            LOG.info("Kafka crash, guards {}, {}: 1,000 orders, consumer crashed mid-batch -> {} effects",
                    guards, protocol, effects);
            return effects;
        }
    }

    @Test
    void aConsumerCrashingMidBatchAndAReplacementApplyEveryOrderOnceAndLoseNone(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(kafka, postgres, names, Guards.ON)).isEqualTo(1_000);
    }

    @Test
    void inRedisOnlyModeACrashMidBatchAppliesEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(kafka, postgres, names, Guards.REDIS_ONLY)).isEqualTo(1_000);
    }

    @Test
    void withoutClaimAndBusinessCheckACrashReappliesTheUncommittedRecords(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(kafka, postgres, names, Guards.OFF)).isGreaterThan(1_000);
    }

    // 5. Rebalance ---------------------------------------------------------------------------

    private int rebalance(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards)
            throws Exception {
        return rebalance(kafka, postgres, names, guards, Map.of());
    }

    private int rebalance(KafkaBroker kafka, PostgresDatabase postgres, TestNames names, Guards guards,
                          Map<String, Object> protocol) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 6, guards)) {
            scenario.handlerDelay(2);
            scenario.produce(3_000, 3);
            IdemKafkaConsumer<Order> leaving = scenario.startConsumer(2, protocol);
            scenario.startConsumer(2, protocol);
            await().atMost(DRAIN).until(() -> scenario.invocations.size() >= 1_000);
            scenario.startConsumer(2, protocol);
            await().atMost(DRAIN).until(() -> scenario.invocations.size() >= 2_000);
            leaving.close();
            scenario.awaitDrained(DRAIN);
            int effects = scenario.effects();
            LOG.info("Kafka rebalance, guards {}, {}: 9,000 records of 3,000 orders, a consumer joins and one leaves "
                    + "-> {} effects", guards, protocol, effects);
            return effects;
        }
    }

    @Test
    void aConsumerJoiningAndOneLeavingMidRunLoseNothingAndApplyNothingTwice(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(rebalance(kafka, postgres, names, Guards.ON)).isEqualTo(3_000);
    }

    @Test
    void inRedisOnlyModeARebalanceAppliesEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(rebalance(kafka, postgres, names, Guards.REDIS_ONLY)).isEqualTo(3_000);
    }

    @Test
    void withoutClaimAndBusinessCheckTheRebalanceRunAppliesDuplicates(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(rebalance(kafka, postgres, names, Guards.OFF)).isGreaterThan(3_000);
    }

    // 5b. Kafka 4's consumer group protocol (KIP-848): the broker assigns, and a rebalance moves only
    // the partitions that change owner, without stopping the others.

    private static final Map<String, Object> CONSUMER_PROTOCOL = Map.of("group.protocol", "consumer");

    @Test
    void withTheConsumerGroupProtocolACrashMidBatchAppliesEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(kafka, postgres, names, Guards.ON, CONSUMER_PROTOCOL)).isEqualTo(1_000);
    }

    @Test
    void withTheConsumerGroupProtocolInRedisOnlyModeACrashMidBatchAppliesEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(crash(kafka, postgres, names, Guards.REDIS_ONLY, CONSUMER_PROTOCOL)).isEqualTo(1_000);
    }

    @Test
    void withTheConsumerGroupProtocolAJoinAndALeaveApplyEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(rebalance(kafka, postgres, names, Guards.ON, CONSUMER_PROTOCOL)).isEqualTo(3_000);
    }

    @Test
    void withTheConsumerGroupProtocolInRedisOnlyModeAJoinAndALeaveApplyEveryOrderOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(rebalance(kafka, postgres, names, Guards.REDIS_ONLY, CONSUMER_PROTOCOL)).isEqualTo(3_000);
    }

    @Test
    void withTheConsumerGroupProtocolAndNoClaimOrBusinessCheckTheRebalanceRunAppliesDuplicates(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        assertThat(rebalance(kafka, postgres, names, Guards.OFF, CONSUMER_PROTOCOL)).isGreaterThan(3_000);
    }

    // 6. Ordering ----------------------------------------------------------------------------

    @Test
    void laterMessagesOfAPartitionWaitForAFailedOne(KafkaBroker kafka, PostgresDatabase postgres, TestNames names)
            throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String third = scenario.orderId(2);
            scenario.behaviour((order, invocation) -> {
                if (order.id().equals(third) && invocation <= 2) {
                    throw new IllegalStateException("reservation locked");
                }
            });
            scenario.produce(5, 1);
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                expected.add(scenario.orderId(i));
            }
            assertThat(scenario.appliedOrder).containsExactlyElementsOf(expected);
        }
    }

    // Bad input ------------------------------------------------------------------------------

    @Test
    void aRecordWithoutAnIdempotencyKeyGoesToTheDeadLetterTopicWithThatReason(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            // Keys come from a header here; the second record lacks it.
            scenario.keys(KeySource.header("order-id"));
            scenario.produceWithHeader(List.of(scenario.orderId(0), "", scenario.orderId(2)), "order-id");
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            assertThat(scenario.effects()).isEqualTo(2);
            assertThat(scenario.readAll(scenario.topic + ".DLT")).singleElement()
                    .satisfies(d -> assertThat(headers(d)).containsEntry("idem-reason", "no idempotency key")
                            .containsEntry("idem-idempotency-key", scenario.topic + "-0@1"));
        }
    }

    @Test
    void binaryHeaderValuesAsKeysAreDistinctEffects(KafkaBroker kafka, PostgresDatabase postgres, TestNames names)
            throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            // Keys come from a binary header (not UTF-8): each value its own event.
            scenario.keys(KeySource.header("event-id"));
            scenario.produceWithBinaryHeader(List.of(new byte[] {(byte) 0xFF}, new byte[] {(byte) 0xFE},
                    new byte[] {(byte) 0xC3, 0x28}), "event-id");
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            assertThat(scenario.appliedOrder).as("three events, three effects")
                    .containsExactlyInAnyOrder(scenario.orderId(0), scenario.orderId(1), scenario.orderId(2));
        }
    }

    @Test
    void anUndecodableRecordGoesToTheDeadLetterTopicWithItsReasonAndThePartitionMovesOn(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            scenario.produceRaw(List.of(KafkaScenario.json(new Order(scenario.orderId(0), 1)),
                    "{\"id\": truncated".getBytes(StandardCharsets.UTF_8),
                    KafkaScenario.json(new Order(scenario.orderId(2), 1))));
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            assertThat(scenario.effects()).isEqualTo(2);
            List<ConsumerRecord<byte[], byte[]>> deadLetters = scenario.readAll(scenario.topic + ".DLT");
            assertThat(deadLetters).singleElement().satisfies(d -> {
                assertThat(new String(d.value(), StandardCharsets.UTF_8)).isEqualTo("{\"id\": truncated");
                assertThat(headers(d).get("idem-reason")).startsWith("undecodable payload");
                assertThat(headers(d)).containsEntry("idem-attempts", "0");
            });
            assertThat(scenario.compensated).hasSize(1);
        }
    }
}
