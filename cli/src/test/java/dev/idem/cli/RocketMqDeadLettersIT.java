package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.redis.TestRedisson;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.api.RedissonClient;

/** The operator session on RocketMQ, against a running Idem consumer. */
@IdemTestKit
class RocketMqDeadLettersIT {

    private static final ObjectMapper JSON = new ObjectMapper();
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
    void threeDeadLettersAreListedReplayedOnceRefusedAgainAndForcedAsADuplicate(
            RocketMqBroker rocketMq, RedisEndpoint redis, PostgresDatabase postgres, TestNames names, @TempDir Path home)
            throws Exception {
        // Given three orders that fail five times each and go to <topic>_DLQ
        String topic = names.topic();
        String dlq = topic + "_DLQ";
        rocketMq.createTopic(topic, 1);
        rocketMq.createTopic(dlq, 1);
        rocketMq.createRetryTopic(names.group());
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        List<String> ids = List.of(topic + "-a", topic + "-b", topic + "-c");
        effects.poisoned.addAll(ids);
        Operator operator = KafkaDeadLettersIT.operator(redis, postgres, names, home, "IDEM_ROCKETMQ_NAMESRV",
                rocketMq.nameServerAddress());
        IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer.builder(rocketMq.nameServerAddress(), names.group(),
                effects.processor()).subscribe(topic, "*").consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET).build();
        try {
            consumer.start();
            send(rocketMq, names, topic, ids);
            await().atMost(Duration.ofSeconds(90)).until(() -> effects.compensated.size() == 3);

            // When the operator lists them: a table, and JSON
            Operator.Run table = operator.idem("dlq", "list", "--broker", "rocketmq", "--topic", dlq);
            assertThat(table.code()).as(table.toString()).isZero();
            ids.forEach(id -> assertThat(table.out()).containsPattern(":0:\\d+\\s+" + id + "\\s+" + topic
                    + "\\s+5\\s+IllegalStateException\\s+[0-9a-f]{8}\\s+\\S+\\s+no"));
            JsonNode listed = JSON.readTree(operator.idem("dlq", "list", "-b", "rocketmq", "-t", dlq, "-o", "json").out());
            assertThat(listed).hasSize(3);
            JsonNode first = null;
            for (JsonNode entry : listed) {
                if (entry.get("key").asText().equals(ids.get(0))) {
                    first = entry;
                }
            }
            assertThat(first).isNotNull();
            String entry = first.get("entry").asText();
            assertThat(first.get("replayed").asBoolean()).isFalse();
            String show = operator.idem("dlq", "show", entry, "-b", "rocketmq", "-t", dlq).out();
            assertThat(show).contains("\"id\" : \"" + ids.get(0) + "\"", "tags        eu", "trace-id: trace-0",
                    "state         DEAD");
            assertThat(show.indexOf("idem-original-topic")).as("Idem's headers in the order Idem writes them, "
                    + "although RocketMQ's properties come back in hash order")
                    .isLessThan(show.indexOf("idem-original-partition"))
                    .isLessThan(show.indexOf("idem-idempotency-key"));
            assertThat(show.indexOf("idem-idempotency-key")).isLessThan(show.indexOf("idem-reason"));
            assertThat(show.indexOf("idem-reason")).isLessThan(show.indexOf("idem-last-failure-at"));

            // When it replays one with --dry-run: nothing is sent
            effects.poisoned.remove(ids.get(0));
            Operator.Run dryRun = operator.idem("dlq", "replay", "-b", "rocketmq", "-t", dlq, "--entry", entry, "--dry-run");
            assertThat(dryRun.code()).as(dryRun.toString()).isZero();
            assertThat(dryRun.out()).contains("1 would be sent", "nothing was sent");
            assertThat(operator.idem("claims", "show", names.group(), ids.get(0), "-t", topic).out()).contains("DEAD");

            // When it replays it for real: applied once, with its tags, keys and properties
            Operator.Run replay = operator.idem("dlq", "replay", "-b", "rocketmq", "-t", dlq, "--entry", entry, "--yes");
            assertThat(replay.code()).as(replay.toString()).isZero();
            assertThat(replay.out()).contains("sent 1, refused 0, failed 0");
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.applied(ids.get(0)) == 1);
            assertThat(effects.headers.get(ids.get(0))).containsEntry("trace-id", "trace-0")
                    .noneSatisfy((name, value) -> assertThat(name).startsWith("idem-"));

            // When it replays it again: refused
            Operator.Run again = operator.idem("dlq", "replay", "-b", "rocketmq", "-t", dlq, "--key", ids.get(0), "--yes");
            assertThat(again.code()).as("nothing left to do is not a failure: %s", again).isEqualTo(Idem.OK);
            assertThat(again.out()).contains("already replayed", "sent 0, refused 1, failed 0");

            // When it forces it: sent, and the consumer reports a duplicate
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    operator.idem("claims", "show", names.group(), ids.get(0), "-t", topic).out()).contains("DONE"));
            Operator.Run forced = operator.idem("dlq", "replay", "-b", "rocketmq", "-t", dlq, "--key", ids.get(0),
                    "--yes", "--force");
            assertThat(forced.code()).as(forced.toString()).isZero();
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.duplicates(ids.get(0)) == 1);
            assertThat(effects.applied(ids.get(0))).isEqualTo(1);
            assertThat(effects.applied(ids.get(1)) + effects.applied(ids.get(2))).isZero();
        } finally {
            consumer.close();
        }
    }

    static void send(RocketMqBroker rocketMq, TestNames names, String topic, List<String> ids) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            for (int i = 0; i < ids.size(); i++) {
                Message message = new Message(topic, "eu", ids.get(i), new Order(ids.get(i), 1).json());
                message.putUserProperty("trace-id", "trace-" + i);
                producer.send(message);
            }
        } finally {
            producer.shutdown();
        }
    }
}
