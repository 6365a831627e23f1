package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.NonRetryableException;
import dev.idem.redis.Guards;
import dev.idem.redis.OwnRedisServer;
import dev.idem.redis.TestRedisson;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Outages, shutdowns and awkward dead letters, on the real broker, Redis and PostgreSQL. */
@IdemTestKit
class IdemRocketMqResilienceIT {

    private static final Logger LOG = LoggerFactory.getLogger(IdemRocketMqResilienceIT.class);
    private static final Duration QUIET = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final Duration OUTAGE = Duration.ofSeconds(60);
    private static RedissonClient redisson;

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    private static void pass(Duration time) {
        await().pollDelay(time).atMost(time.plusSeconds(1)).until(() -> true);
    }

    // Issue 1: a Redis outage must not spend the broker's redelivery count --------------------

    @Test
    void messagesProducedDuringASixtySecondRedisOutageAreEachAppliedOnceWhenRedisComesBack(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        outage(rocketMq, postgres, names, OUTAGE, 50, c -> c.batchSize(4));
    }

    @Test
    void anOrderlyConsumerAppliesMessagesProducedDuringARedisOutageOnceEach(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        // Twenty seconds: the old orderly listener's suspensions raised reconsumeTimes past 5 by then.
        outage(rocketMq, postgres, names, Duration.ofSeconds(20), 20, c -> c.orderly(true));
    }

    private void outage(RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names, Duration outage,
                        int during, Consumer<IdemRocketMqConsumer.Builder<Order>> settings) throws Exception {
        int total = 10 + during;
        try (OwnRedisServer server = OwnRedisServer.start()) {
            RedissonClient outageRedisson = server.client();
            try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, outageRedisson, postgres, names, 4,
                    Guards.ON)) {
                // Given a consumer that applied ten orders
                scenario.startConsumer(settings);
                scenario.send(orders(scenario, 0, 10));
                await().atMost(TIMEOUT).until(() -> scenario.effects() == 10);

                // When Redis stops, more orders arrive, and Redis comes back (empty) after the outage
                server.down();
                scenario.send(orders(scenario, 10, total));
                pass(outage);
                int callsDuringOutage = scenario.calls() - 10;
                server.up();
                await().atMost(TIMEOUT).until(() -> scenario.effects() >= total);
                scenario.awaitQuiet(QUIET, TIMEOUT);

                // Then every order was applied once, by its handler, and nothing was dead-lettered anywhere
                int maxBrokerAttempt = scenario.invocations.values().stream().flatMap(List::stream)
                        .mapToInt(Integer::intValue).max().orElse(0);
                LOG.info("Redis outage of {}: {} orders produced during it, {} handler calls during it,"
                        + " highest broker attempt after it {}", outage, during, callsDuringOutage, maxBrokerAttempt);
                assertThat(callsDuringOutage).isZero();
                assertThat(scenario.effects()).isEqualTo(total);
                for (int i = 10; i < total; i++) {
                    assertThat(scenario.invocations.get(scenario.orderId(i))).as("handler calls of order %d", i)
                            .hasSize(1);
                }
                assertThat(scenario.brokerDeadLetters()).as("messages in %DLQ%" + scenario.group).isZero();
                assertThat(scenario.compensated).as("dead-lettered by Idem").isEmpty();
                assertThat(scenario.deadLetters(Duration.ofSeconds(1))).isEmpty();
            } finally {
                outageRedisson.shutdown();
            }
        }
    }

    private static List<Message> orders(RocketMqScenario scenario, int from, int to) {
        List<Message> messages = new ArrayList<>();
        for (int i = from; i < to; i++) {
            messages.add(scenario.message(RocketMqScenario.json(new Order(scenario.orderId(i), 1)), scenario.orderId(i)));
        }
        return messages;
    }

    // Issue 14: close lets running handlers finish ------------------------------------------

    @Test
    void aHandlerRunningAtCloseFinishesUninterruptedAndItsEffectCommits(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 1, Guards.ON)) {
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            scenario.behaviour((order, invocation, attempt) -> {
                started.countDown();
                try {
                    // A slow handler: three seconds of work.
                    TimeUnit.SECONDS.sleep(3);
                } catch (InterruptedException e) {
                    interrupted.set(true);
                    throw e;
                }
            });
            IdemRocketMqConsumer<Order> consumer = scenario.startConsumer(c -> { });
            scenario.send(orders(scenario, 0, 1));
            assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();

            // When
            long begin = System.nanoTime();
            consumer.close();
            long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);

            // Then
            LOG.info("close with a handler running took {} ms", closeMillis);
            assertThat(interrupted).as("handler interrupted").isFalse();
            assertThat(scenario.effects()).isEqualTo(1);
            assertThat(scenario.invocations.get(scenario.orderId(0))).hasSize(1);
        }
    }

    // Issues 19 and 21: dead letters keep tags and keys, and blank values never block them ------

    @Test
    void messagesWithoutKeysOrWithBlankPropertiesReachTheDeadLetterTopicWithTagsAndKeys(
            RocketMqBroker rocketMq, PostgresDatabase postgres, TestNames names) throws Exception {
        try (RocketMqScenario scenario = new RocketMqScenario(rocketMq, redisson, postgres, names, 1, Guards.ON)) {
            String rejected = scenario.orderId(1);
            scenario.behaviour((order, invocation, attempt) -> {
                if (order.id().equals(rejected)) {
                    throw new NonRetryableException("warehouse closed");
                }
            });
            // Given an order without id (no idempotency key, so no exception headers either)...
            Message keyless = scenario.message(RocketMqScenario.json(new Order("", 1)), null);
            keyless.setTags("bulk");
            // ...and a rejected order with tags, keys, a property and a blank property
            Message blank = scenario.message(RocketMqScenario.json(new Order(rejected, 1)), rejected + " order-1");
            blank.setTags("vip");
            blank.putUserProperty("region", "eu");
            MessageAccessor.putProperty(blank, "note", " ");
            scenario.send(List.of(keyless, blank));

            // When
            scenario.startConsumer(c -> { });
            await().atMost(TIMEOUT).until(() -> scenario.compensated.size() == 2);

            // Then
            List<MessageExt> deadLetters = scenario.deadLetters(Duration.ofSeconds(1));
            assertThat(deadLetters).hasSize(2);
            Map<String, MessageExt> byTags = deadLetters.stream()
                    .collect(Collectors.toMap(MessageExt::getTags, Function.identity()));
            assertThat(byTags.get("bulk").getProperties())
                    .containsEntry("idem-reason", "no idempotency key")
                    .doesNotContainKeys("idem-exception-class", "idem-exception-message");
            MessageExt rejectedLetter = byTags.get("vip");
            assertThat(rejectedLetter.getKeys()).isEqualTo(rejected + " order-1");
            assertThat(rejectedLetter.getProperties())
                    .containsEntry("region", "eu")
                    .containsEntry("idem-exception-message", "warehouse closed")
                    .doesNotContainKey("note");
            assertThat(new String(rejectedLetter.getBody(), StandardCharsets.UTF_8)).contains(rejected);
            assertThat(scenario.compensated).hasSize(2);
        }
    }
}
