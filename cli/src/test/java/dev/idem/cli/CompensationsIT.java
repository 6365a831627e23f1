package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetter;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.core.DeadLetterRouting;
import dev.idem.kafka.KafkaDeadLetterPublisher;
import dev.idem.redis.TestRedisson;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import dev.idem.rocketmq.RocketMqDeadLetterPublisher;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.api.RedissonClient;

/** A compensation cut off by a crash is found and run once through the running consumer's hook, on both brokers. */
@IdemTestKit
class CompensationsIT {

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
    void aPendingCompensationIsListedAndRunOnceByTheConsumer(KafkaBroker kafka, RedisEndpoint redis,
                                                             PostgresDatabase postgres, TestNames names,
                                                             @TempDir Path home) throws Exception {
        // Given a consumer that crashed after publishing a dead letter and marking it, before its
        // compensation: the key is dead, its compensation pending under a lapsed lease
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        String id = topic + "-crashed";
        IdempotencyKey key = new IdempotencyKey(names.group(), topic, id);
        String crashed = "crashed-consumer";
        effects.claims.claim(List.of(new ClaimRequest(key, 1)), crashed, Duration.ofSeconds(30));
        assertThat(effects.claims.doom(key, crashed, "attempts exhausted", "java.lang.IllegalStateException: no stock"))
                .isTrue();
        try (KafkaDeadLetterPublisher publisher = KafkaDeadLetterPublisher.builder(Map.of("bootstrap.servers",
                kafka.bootstrapServers())).build()) {
            Envelope original = new Envelope(topic, 0, "0", topic + "-0@0", 1, Map.of("trace-id", "t"),
                    new Order(id, 1).json(), id.getBytes(StandardCharsets.UTF_8));
            publisher.publish(new DeadLetter(key, 1L, original, 5, "attempts exhausted",
                    IllegalStateException.class.getName(),
                    "no stock", "", Instant.now(), Instant.now()));
        }
        assertThat(effects.claims.deadLetter(key, crashed, Duration.ofMillis(500))).isTrue();

        Operator operator = KafkaDeadLettersIT.operator(redis, postgres, names, home, "IDEM_KAFKA_BOOTSTRAP",
                kafka.bootstrapServers());
        try (IdemKafkaConsumer<Order> consumer = IdemKafkaConsumer.builder(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG,
                names.group(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), effects.processor())
                .topics(topic).build()) {
            consumer.start();

            // When the operator lists the pending compensations
            Operator.Run pending = operator.idem("compensations", "pending", "--group", names.group());
            assertThat(pending.code()).as(pending.toString()).isZero();
            assertThat(pending.out()).contains(id, "attempts exhausted", crashed, "1 pending compensation(s)");

            // ... and runs them
            Operator.Run run = operator.idem("compensations", "pending", "--group", names.group(), "--run",
                    "--broker", "kafka", "--topic", topic + ".DLT", "--yes");
            assertThat(run.code()).as(run.toString()).isZero();
            assertThat(run.out()).contains(id, "sent", "sent 1 of 1");

            // Then the consumer's hook ran once, the handler never, and nothing is pending any more
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.compensated.size() == 1);
            assertThat(effects.compensated.get(0).key()).isEqualTo(key);
            assertThat(effects.compensated.get(0).reason()).isEqualTo("attempts exhausted");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    operator.idem("compensations", "pending", "--group", names.group()).out())
                    .contains("0 pending compensation(s)"));
            assertThat(operator.idem("claims", "show", names.group(), id, "-t", topic).out())
                    .contains("DEAD", "compensation  ok");
            Operator.Run again = operator.idem("compensations", "pending", "--group", names.group(), "--run",
                    "--broker", "kafka", "--topic", topic + ".DLT", "--yes");
            assertThat(again.out()).contains("no pending compensation");
            assertThat(effects.applied(id)).isZero();
            assertThat(effects.outcomes).filteredOn(o -> o instanceof Outcome.DeadLettered).hasSize(1);
            assertThat(effects.compensated).hasSize(1);
        }
    }

    @Test
    void aPendingCompensationIsListedAndRunOnceByTheRocketMqConsumer(RocketMqBroker rocketMq, RedisEndpoint redis,
                                                                     PostgresDatabase postgres, TestNames names,
                                                                     @TempDir Path home) throws Exception {
        // Given a RocketMQ consumer that crashed after publishing a dead letter to <topic>_DLQ and marking
        // it, before its compensation: the key is dead, its compensation pending under a lapsed lease
        String topic = names.topic();
        String dlq = topic + "_DLQ";
        rocketMq.createTopic(topic, 1);
        rocketMq.createTopic(dlq, 1);
        rocketMq.createRetryTopic(names.group());
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        String id = topic + "-crashed";
        IdempotencyKey key = new IdempotencyKey(names.group(), topic, id);
        String crashed = "crashed-consumer";
        effects.claims.claim(List.of(new ClaimRequest(key, 1)), crashed, Duration.ofSeconds(30));
        assertThat(effects.claims.doom(key, crashed, "attempts exhausted", "java.lang.IllegalStateException: no stock"))
                .isTrue();
        try (RocketMqDeadLetterPublisher publisher = RocketMqDeadLetterPublisher.start(rocketMq.nameServerAddress(),
                names.group(), DeadLetterRouting.suffix("_DLQ"))) {
            Envelope original = new Envelope(topic, 0, "0", "msg-" + id, 1, Map.of("trace-id", "t"),
                    new Order(id, 1).json(), id.getBytes(StandardCharsets.UTF_8));
            publisher.publish(new DeadLetter(key, 1L, original, 5, "attempts exhausted",
                    IllegalStateException.class.getName(),
                    "no stock", "", Instant.now(), Instant.now()));
        }
        assertThat(effects.claims.deadLetter(key, crashed, Duration.ofMillis(500))).isTrue();

        Operator operator = KafkaDeadLettersIT.operator(redis, postgres, names, home, "IDEM_ROCKETMQ_NAMESRV",
                rocketMq.nameServerAddress());
        IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer.builder(rocketMq.nameServerAddress(), names.group(),
                effects.processor()).subscribe(topic, "*").consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET).build();
        try {
            consumer.start();

            // When the operator lists the pending compensations and runs them through RocketMQ
            Operator.Run pending = operator.idem("compensations", "pending", "--group", names.group());
            assertThat(pending.code()).as(pending.toString()).isZero();
            assertThat(pending.out()).contains(id, "attempts exhausted", crashed, "1 pending compensation(s)");
            Operator.Run run = operator.idem("compensations", "pending", "--group", names.group(), "--run",
                    "--broker", "rocketmq", "--topic", dlq, "--yes");
            assertThat(run.code()).as(run.toString()).isZero();
            assertThat(run.out()).contains(id, "sent", "sent 1 of 1");

            // Then the consumer's hook ran once, the handler never, and nothing is pending any more
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.compensated.size() == 1);
            assertThat(effects.compensated.get(0).key()).isEqualTo(key);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    operator.idem("compensations", "pending", "--group", names.group()).out())
                    .contains("0 pending compensation(s)"));
            assertThat(operator.idem("claims", "show", names.group(), id, "-t", topic).out())
                    .contains("DEAD", "compensation  ok");
            assertThat(operator.idem("compensations", "pending", "--group", names.group(), "--run",
                    "--broker", "rocketmq", "--topic", dlq, "--yes").out()).contains("no pending compensation");
            assertThat(effects.applied(id)).isZero();
            assertThat(effects.outcomes).filteredOn(o -> o instanceof Outcome.DeadLettered).hasSize(1);
            assertThat(effects.compensated).hasSize(1);
        } finally {
            consumer.close();
        }
    }
}
