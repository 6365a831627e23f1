package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.Backoff;
import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.KeySource;
import dev.idem.core.NonRetryableException;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.redis.Guards;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * What must not stop a consumer or its group: errors escaping a record's processing, long batches,
 * failed commits. And what dead letters carry. Real broker, Redis and PostgreSQL.
 */
@IdemTestKit
class IdemKafkaConsumerResilienceIT {

    private static final Duration DRAIN = Duration.ofSeconds(90);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    // Errors that belong to one record ---------------------------------------------------------

    @Test
    void aHandlerOverflowingItsStackKillsNeitherMemberAndItsRecordIsDeadLettered(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String deep = scenario.orderId(3);
            scenario.lease(Duration.ofSeconds(1)).behaviour((order, invocation) -> {
                if (order.id().equals(deep)) {
                    throw new StackOverflowError("deeply nested JSON");
                }
            });
            scenario.produce(10, 1);
            IdemKafkaConsumer<Order> first = scenario.startConsumer(1);
            IdemKafkaConsumer<Order> second = scenario.startConsumer(1);

            scenario.awaitDrained(DRAIN);

            assertThat(first.isRunning()).as("first member alive, failure %s", first.failure()).isTrue();
            assertThat(second.isRunning()).as("second member alive, failure %s", second.failure()).isTrue();
            assertThat(scenario.effects()).isEqualTo(9);
            assertThat(scenario.readAll(scenario.topic + ".DLT")).singleElement()
                    .satisfies(d -> assertThat(header(d, "idem-reason")).isEqualTo("attempts exhausted"));
            assertThat(scenario.calls(deep)).as("a stack overflow is a handler failure, retried to the limit")
                    .isEqualTo(5);
        }
    }

    @Test
    void aCodecReturningNullForOneRecordLeavesTheConsumerRunningAndTheOthersApplied(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String nothing = scenario.orderId(2);
            PayloadCodec<Order> json = PayloadCodec.json(Order.class);
            // A key that does not need the payload, so the null reaches the handler's delivery.
            scenario.keys(KeySource.messageKey());
            scenario.lease(Duration.ofSeconds(1)).codec(body -> {
                Order order = json.decode(body);
                return order.id().equals(nothing) ? null : order;
            });
            scenario.produce(5, 1);
            IdemKafkaConsumer<Order> consumer = scenario.startConsumer(1);

            scenario.awaitDrained(DRAIN);

            assertThat(consumer.isRunning()).as("failure %s", consumer.failure()).isTrue();
            assertThat(scenario.effects()).isEqualTo(4);
            assertThat(scenario.readAll(scenario.topic + ".DLT")).singleElement()
                    .satisfies(d -> assertThat(header(d, "idem-reason")).isEqualTo("undecodable payload: the codec returned null"));
            assertThat(scenario.calls(nothing)).as("a payload that is not there never reaches the handler").isZero();
        }
    }

    @Test
    void aBackoffReturningNoDelayIsRefusedNamingTheBackoff(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            Backoff broken = attempt -> null;
            scenario.backoff(broken);

            assertThatThrownBy(() -> scenario.startConsumer(1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("backoff must give a delay >= 0 but gave null");
        }
    }

    @Test
    void aRebalanceDoesNotCutTheBackoffOfARecordSentBackShort(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            // Given a record whose handler fails, sent back with a backoff of 8 s
            String failing = scenario.orderId(0);
            Duration backoff = Duration.ofSeconds(8);
            scenario.backoff(backoff).behaviour((order, invocation) -> {
                throw new IOException("stock service unavailable");
            });
            scenario.produce(1, 1);
            scenario.startConsumer(1);
            await().atMost(DRAIN).until(() -> scenario.calls(failing) == 1);
            Instant first = scenario.invocations.get(failing).get(0);

            // When another member joins the group (for another topic): an eager rebalance takes the
            // partition away and gives it back
            String other = scenario.topic + "-other";
            kafka.createTopic(other, 1);
            try (KafkaConsumer<byte[], byte[]> joiner = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, scenario.group),
                    new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                joiner.subscribe(List.of(other));
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    joiner.poll(Duration.ofMillis(100));
                    return !joiner.assignment().isEmpty();
                });
                assertThat(Duration.between(first, Instant.now())).as("rebalanced within the backoff")
                        .isLessThan(backoff.minusSeconds(2));

                // Then the record still waits out its backoff before its second run
                await().atMost(DRAIN).until(() -> scenario.calls(failing) >= 2);
            }
            Instant second = scenario.invocations.get(failing).get(1);
            assertThat(Duration.between(first, second)).isGreaterThanOrEqualTo(backoff.minusMillis(500));
        }
    }

    // Long batches -----------------------------------------------------------------------------

    @Test
    void batchesLongerThanMaxPollIntervalKeepThreeMembersAliveAndApplyEachRecordOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            // 15 records of 1 s per poll: 15 s of processing against a 10 s poll interval.
            scenario.lease(Duration.ofSeconds(5)).behaviour((order, invocation) -> TimeUnit.SECONDS.sleep(1));
            scenario.produce(30, 1);
            Map<String, Object> slow = Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 15,
                    ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 10_000);
            List<IdemKafkaConsumer<Order>> members = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                members.add(scenario.startConsumer(1, slow));
            }

            scenario.awaitDrained(DRAIN);

            for (IdemKafkaConsumer<Order> member : members) {
                assertThat(member.isRunning()).as("member alive, failure %s", member.failure()).isTrue();
            }
            assertThat(scenario.effects()).isEqualTo(30);
            for (int i = 0; i < 30; i++) {
                assertThat(scenario.calls(scenario.orderId(i))).as("handler calls of order %d", i).isEqualTo(1);
            }
        }
    }

    // Failed commits ---------------------------------------------------------------------------

    @Test
    void aMemberRemovedFromItsGroupMidBatchRejoinsAndEveryRecordIsAppliedOnce(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            scenario.lease(Duration.ofSeconds(2)).behaviour((order, invocation) -> TimeUnit.MILLISECONDS.sleep(300));
            scenario.produce(12, 1);
            IdemKafkaConsumer<Order> consumer = scenario.startConsumer(1,
                    Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 12));
            await().atMost(DRAIN).until(() -> scenario.invocations.size() >= 3);

            admin.removeMembersFromConsumerGroup(scenario.group, new RemoveMembersFromConsumerGroupOptions())
                    .all().get(30, TimeUnit.SECONDS);
            scenario.awaitDrained(DRAIN);

            assertThat(consumer.isRunning()).as("failure %s", consumer.failure()).isTrue();
            assertThat(scenario.effects()).isEqualTo(12);
        }
    }

    // Shutdown -----------------------------------------------------------------------------------

    @Test
    void aCloseMidBatchCommitsWhatFinishedAndTheRestIsAppliedOnceLater(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            scenario.behaviour((order, invocation) -> TimeUnit.MILLISECONDS.sleep(200));
            scenario.produce(20, 1);
            IdemKafkaConsumer<Order> first = scenario.startConsumer(1, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20));
            await().atMost(DRAIN).until(() -> scenario.invocations.size() >= 5);

            first.close();
            int applied = scenario.effects();

            assertThat(applied).isBetween(5, 19);
            assertThat(scenario.committed(0)).isEqualTo(applied);
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);
            assertThat(scenario.effects()).isEqualTo(20);
        }
    }

    // Dead letters -------------------------------------------------------------------------------

    @Test
    void aDeadLetterCopiesTheOriginalKeyAndHeadersByteForByteAndReplacesIdemHeaders(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String poison = scenario.orderId(0);
            scenario.behaviour((order, invocation) -> {
                throw new NonRetryableException("no such warehouse");
            });
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(scenario.topic,
                    poison.getBytes(StandardCharsets.UTF_8), KafkaScenario.json(new Order(poison, 1)));
            byte[] binary = {(byte) 0xff, 0x00, (byte) 0xfe};
            record.headers().add("trace", "a".getBytes(StandardCharsets.UTF_8))
                    .add("trace", "b".getBytes(StandardCharsets.UTF_8))
                    .add("binary", binary)
                    .add("no-value", null)
                    .add("idem-reason", "an earlier dead letter".getBytes(StandardCharsets.UTF_8));
            scenario.produceRecords(List.of(record));
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            ConsumerRecord<byte[], byte[]> deadLetter = scenario.readAll(scenario.topic + ".DLT").get(0);
            assertThat(deadLetter.key()).isEqualTo(poison.getBytes(StandardCharsets.UTF_8));
            List<Header> original = new ArrayList<>();
            List<String> reasons = new ArrayList<>();
            for (Header header : deadLetter.headers()) {
                if (DeadLetterHeaders.isIdemHeader(header.key())) {
                    if (header.key().equals("idem-reason")) {
                        reasons.add(new String(header.value(), StandardCharsets.UTF_8));
                    }
                } else {
                    original.add(header);
                }
            }
            assertThat(original).extracting(Header::key).containsExactly("trace", "trace", "binary", "no-value");
            assertThat(original.get(0).value()).isEqualTo("a".getBytes(StandardCharsets.UTF_8));
            assertThat(original.get(1).value()).isEqualTo("b".getBytes(StandardCharsets.UTF_8));
            assertThat(original.get(2).value()).isEqualTo(binary);
            assertThat(original.get(3).value()).isNull();
            assertThat(reasons).containsExactly("non-retryable failure");
        }
    }

    @Test
    void anUndecodableTombstoneStaysATombstoneWithItsKeyInTheDeadLetter(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            byte[] key = scenario.orderId(0).getBytes(StandardCharsets.UTF_8);
            scenario.produceRecords(List.of(new ProducerRecord<>(scenario.topic, key, null)));
            scenario.startConsumer(1);
            scenario.awaitDrained(DRAIN);

            assertThat(scenario.readAll(scenario.topic + ".DLT")).singleElement().satisfies(d -> {
                assertThat(d.key()).isEqualTo(key);
                assertThat(d.value()).isNull();
                assertThat(header(d, "idem-reason")).startsWith("undecodable payload");
            });
        }
    }

    @Test
    void aDeadLetterPublisherSetOnTheProcessorBuilderGetsTheDeadLetters(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            scenario.behaviour((order, invocation) -> {
                throw new NonRetryableException("no such warehouse");
            });
            List<DeadLetter> mine = new CopyOnWriteArrayList<>();
            scenario.produce(1, 1);
            scenario.start(scenario.consumerBuilder(1, Map.of(), scenario.processorBuilder().deadLetters(mine::add)));
            scenario.awaitDrained(DRAIN);

            assertThat(mine).singleElement().satisfies(d -> assertThat(d.key().value()).isEqualTo(scenario.orderId(0)));
            assertThat(scenario.readAll(scenario.topic + ".DLT")).isEmpty();
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
