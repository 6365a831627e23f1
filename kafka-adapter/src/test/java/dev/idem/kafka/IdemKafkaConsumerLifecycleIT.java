package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.ConsumerState;
import dev.idem.core.NonRetryableException;
import dev.idem.core.memory.ManualClock;
import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.redis.Guards;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The consumer's own settings: clock, close order and bound, dead-letter decorator, failure listener. */
@IdemTestKit
class IdemKafkaConsumerLifecycleIT {

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

    @Test
    void aPartitionWaitingForItsBackoffResumesWhenTheInjectedClockSaysSo(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String flaky = scenario.orderId(1);
            scenario.backoff(Duration.ofHours(1)).behaviour((order, invocation) -> {
                if (order.id().equals(flaky) && invocation == 1) {
                    throw new IllegalStateException("stock service timeout");
                }
            });
            ManualClock clock = new ManualClock();
            scenario.produce(3, 1);
            scenario.start(scenario.consumerBuilder(1, Map.of(), scenario.processorBuilder()).ticker(clock));
            await().atMost(DRAIN).until(() -> scenario.calls(flaky) == 1);

            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> scenario.calls(flaky) == 1);
            clock.advance(Duration.ofHours(1));
            scenario.awaitDrained(DRAIN);

            assertThat(scenario.calls(flaky)).isEqualTo(2);
            assertThat(scenario.effects()).isEqualTo(3);
        }
    }

    @Test
    void aHandlerOutlivingTheCloseTimeoutLetsCloseReturnInTimeAndStillPublishesItsDeadLetter(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            scenario.behaviour((order, invocation) -> {
                TimeUnit.SECONDS.sleep(3);
                throw new NonRetryableException("warehouse closed for good");
            });
            scenario.produce(1, 1);
            IdemKafkaConsumer<Order> consumer = scenario.start(scenario.consumerBuilder(1, Map.of(),
                    scenario.processorBuilder()).closeTimeout(Duration.ofMillis(500)));
            await().atMost(DRAIN).until(() -> scenario.calls(scenario.orderId(0)) == 1);

            long started = System.nanoTime();
            consumer.close();
            Duration closing = Duration.ofNanos(System.nanoTime() - started);

            assertThat(closing).isLessThan(Duration.ofMillis(2_500));
            assertThat(consumer.state()).isEqualTo(ConsumerState.STOPPED);
            await().atMost(DRAIN).until(() -> scenario.compensated.size() == 1);
            assertThat(scenario.readAll(scenario.topic + ".DLT")).hasSize(1);
        }
    }

    @Test
    void aDeadLetterDecoratorWrapsIdemsKafkaPublisher(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            scenario.behaviour((order, invocation) -> {
                throw new NonRetryableException("no such warehouse");
            });
            AtomicInteger counted = new AtomicInteger();
            scenario.produce(2, 1);
            scenario.start(scenario.consumerBuilder(1, Map.of(), scenario.processorBuilder())
                    .deadLetters(publisher -> deadLetter -> {
                        counted.incrementAndGet();
                        publisher.publish(deadLetter);
                    }));
            scenario.awaitDrained(DRAIN);

            assertThat(counted).hasValue(2);
            assertThat(scenario.readAll(scenario.topic + ".DLT")).hasSize(2);
        }
    }

    @Test
    void aStackOverflowInOneRecordsHandlerIsThatRecordsFailureAndTheConsumerRunsOn(
            KafkaBroker kafka, PostgresDatabase postgres, TestNames names) throws Exception {
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 1, Guards.ON)) {
            String deep = scenario.orderId(1);
            scenario.lease(Duration.ofSeconds(1)).behaviour((order, invocation) -> {
                if (order.id().equals(deep) && invocation == 1) {
                    throw new StackOverflowError("deeply nested JSON");
                }
            });
            List<Throwable> heard = new CopyOnWriteArrayList<>();
            scenario.produce(3, 1);
            IdemKafkaConsumer<Order> consumer = scenario.start(scenario.consumerBuilder(1, Map.of(),
                    scenario.processorBuilder()).onFailure(heard::add));
            scenario.awaitDrained(DRAIN);

            // The processor counts it as the record's failure and retries it: nothing escapes to the
            // consumer, which keeps running.
            assertThat(heard).isEmpty();
            assertThat(consumer.state()).isEqualTo(ConsumerState.RUNNING);
            assertThat(scenario.effects()).isEqualTo(3);
            assertThat(scenario.calls(deep)).isEqualTo(2);
        }
    }
}
