package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.core.IdempotencyKey;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.api.RedissonClient;

/** The operator session on Kafka, against a running Idem consumer. */
@IdemTestKit
class KafkaDeadLettersIT {

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

    static Operator operator(RedisEndpoint redis, PostgresDatabase postgres, TestNames names, Path home,
                             String brokerVariable, String brokerAddress) {
        return new Operator(Map.of("IDEM_REDIS_URL", redis.uri().toString(), "IDEM_KEY_PREFIX", names.keyPrefix(),
                brokerVariable, brokerAddress, "IDEM_JDBC_URL", postgres.jdbcUrl(), "IDEM_JDBC_USER", postgres.user(),
                "IDEM_JDBC_PASSWORD", postgres.password()), home);
    }

    @Test
    void threeDeadLettersAreListedReplayedOnceRefusedAgainAndForcedAsADuplicate(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names, @TempDir Path home)
            throws Exception {
        // Given three orders that fail five times each and go to the dead-letter topic
        String topic = names.topic();
        String dlt = topic + ".DLT";
        kafka.createTopic(topic, 1);
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        List<String> ids = List.of(topic + "-a", topic + "-b", topic + "-c");
        effects.poisoned.addAll(ids);
        Operator operator = operator(redis, postgres, names, home, "IDEM_KAFKA_BOOTSTRAP", kafka.bootstrapServers());
        try (IdemKafkaConsumer<Order> consumer = consumer(kafka, names, topic, effects)) {
            consumer.start();
            produce(kafka, topic, ids);
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.compensated.size() == 3);

            // When the operator lists them: a table, and JSON
            Operator.Run table = operator.idem("dlq", "list", "--broker", "kafka", "--topic", dlt);
            assertThat(table.code()).as(table.toString()).isZero();
            assertThat(table.out()).contains("ENTRY", "KEY", "ORIGINAL TOPIC", "ATTEMPTS", "EXCEPTION", "FAILED AT",
                    "REPLAYED");
            for (int i = 0; i < 3; i++) {
                assertThat(table.out()).containsPattern("0:" + i + "\\s+" + ids.get(i) + "\\s+" + topic
                        + "\\s+5\\s+IllegalStateException\\s+[0-9a-f]{8}\\s+\\S+\\s+no");
            }
            JsonNode listed = JSON.readTree(operator.idem("dlq", "list", "-b", "kafka", "-t", dlt, "-o", "json").out());
            assertThat(listed).hasSize(3);
            assertThat(listed.get(1).get("key").asText()).isEqualTo(ids.get(1));
            assertThat(listed.get(1).get("exception").asText()).isEqualTo(IllegalStateException.class.getName());
            assertThat(listed.get(1).get("replayed").asBoolean()).isFalse();

            // ... and one entry in full
            Operator.Run show = operator.idem("dlq", "show", "0:1", "-b", "kafka", "-t", dlt);
            assertThat(show.code()).as(show.toString()).isZero();
            assertThat(show.out()).contains("\"id\" : \"" + ids.get(1) + "\"", "trace-id: trace-1",
                    "idem-reason: attempts exhausted", "state         DEAD", "compensation  ok", "Stack trace:");
            assertThat(show.out().indexOf("idem-original-topic")).as("Idem's headers in the order Idem writes them")
                    .isLessThan(show.out().indexOf("idem-idempotency-key"))
                    .isLessThan(show.out().indexOf("idem-reason"));

            // When it replays one with --dry-run: nothing is sent and the key stays dead
            effects.poisoned.remove(ids.get(0));
            Operator.Run dryRun = operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--entry", "0:0", "--dry-run");
            assertThat(dryRun.code()).as(dryRun.toString()).isZero();
            assertThat(dryRun.out()).contains("dead: reset, then sent", "1 would be sent", "nothing was sent");
            assertThat(endOffset(kafka, topic)).isEqualTo(3);
            assertThat(operator.idem("claims", "show", names.group(), ids.get(0), "--topic", topic).out())
                    .contains("DEAD");

            // When it replays it for real: the consumer applies it once
            Operator.Run replay = operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--entry", "0:0", "--yes",
                    "--rate", "50");
            assertThat(replay.code()).as(replay.toString()).isZero();
            assertThat(replay.out()).contains("sent 1, refused 0, failed 0", topic + "-0@3");
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.applied(ids.get(0)) == 1);
            assertThat(effects.headers.get(ids.get(0))).containsEntry("trace-id", "trace-0")
                    .noneSatisfy((name, value) -> assertThat(name).startsWith("idem-"));
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    operator.idem("claims", "show", names.group(), ids.get(0), "-t", topic).out()).contains("DONE"));

            // When it replays it again: refused, nothing sent
            Operator.Run again = operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--entry", "0:0", "--yes");
            assertThat(again.code()).as("nothing left to do is not a failure: %s", again).isEqualTo(Idem.OK);
            assertThat(again.out()).contains("refused", "already replayed", "by night-operator@ops-host",
                    "sent 0, refused 1, failed 0");
            assertThat(endOffset(kafka, topic)).isEqualTo(4);

            // When it forces it: sent, and the consumer reports a duplicate; the effect stays single
            Operator.Run forced = operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--key", ids.get(0), "--yes",
                    "--force");
            assertThat(forced.code()).as(forced.toString()).isZero();
            assertThat(forced.out()).contains("sent 1, refused 0, failed 0");
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.duplicates(ids.get(0)) == 1);
            assertThat(effects.applied(ids.get(0))).isEqualTo(1);

            // Then the listing shows what was replayed; a purged entry disappears from it and from replays
            JsonNode after = JSON.readTree(operator.idem("dlq", "list", "-b", "kafka", "-t", dlt, "-o", "json").out());
            assertThat(after.get(0).get("replayed").asBoolean()).isTrue();
            assertThat(after.get(0).get("record").get("times").asInt()).isEqualTo(2);
            assertThat(after.get(1).get("replayed").asBoolean()).isFalse();
            Operator.Run purged = operator.idem("dlq", "purge", "-b", "kafka", "-t", dlt, "--key", ids.get(2), "--yes");
            assertThat(purged.code()).as(purged.toString()).isZero();
            assertThat(purged.out()).contains("purged 1 entry of " + dlt);
            Operator.Run purgedAgain = operator.idem("dlq", "purge", "-b", "kafka", "-t", dlt, "--key", ids.get(2), "--yes");
            assertThat(purgedAgain.code()).as(purgedAgain.toString()).isZero();
            assertThat(purgedAgain.out()).as("not 'would be purged': nothing was").contains("no entry of " + dlt
                    + " matches (3 scanned; purged entries are left out)").doesNotContain("would");
            assertThat(operator.idem("dlq", "list", "-b", "kafka", "-t", dlt).out()).doesNotContain(ids.get(2));
            assertThat(operator.idem("dlq", "list", "-b", "kafka", "-t", dlt, "--include-purged").out())
                    .containsPattern(ids.get(2) + ".*purged");
            assertThat(operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--key", ids.get(2), "--yes").out())
                    .contains("no entry of " + dlt + " matches");
            assertThat(effects.applied(ids.get(1)) + effects.applied(ids.get(2))).isZero();
        }
    }

    @Test
    void aReplayRunsAKeyThatACopyMarkedDoneFromTheLedgerAfterRedisLostItsDeadRecord(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names, @TempDir Path home)
            throws Exception {
        // Given an order dead-lettered and compensated, whose dead record Redis then lost, and a copy
        // the ledger answered as a duplicate of the dead-lettering (Redis now says DONE)
        String topic = names.topic();
        String dlt = topic + ".DLT";
        kafka.createTopic(topic, 1);
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        String id = topic + "-lost";
        effects.poisoned.add(id);
        Operator operator = operator(redis, postgres, names, home, "IDEM_KAFKA_BOOTSTRAP", kafka.bootstrapServers());
        try (IdemKafkaConsumer<Order> consumer = consumer(kafka, names, topic, effects)) {
            consumer.start();
            produce(kafka, topic, List.of(id));
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.compensated.size() == 1);
            RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
            IdempotencyKey key = new IdempotencyKey(names.group(), topic, id);
            assertThat(redisson.getKeys().delete(store.redisKey(key))).isEqualTo(1);
            produce(kafka, topic, List.of(id));
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.duplicates(id) == 1);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    operator.idem("claims", "show", names.group(), id, "-t", topic).out()).contains("DONE"));

            // When the operator, the cause fixed, replays its dead letter
            effects.poisoned.remove(id);
            Operator.Run replay = operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--key", id, "--yes");
            assertThat(replay.code()).as(replay.toString()).isZero();
            assertThat(replay.out()).contains("sent 1, refused 0, failed 0");

            // Then the consumer applies it, once
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.applied(id) == 1);
            assertThat(effects.duplicates(id)).isEqualTo(1);
        }
    }

    private static IdemKafkaConsumer<Order> consumer(KafkaBroker kafka, TestNames names, String topic, Effects effects) {
        return IdemKafkaConsumer.builder(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, names.group(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                effects.processor()).topics(topic).build();
    }

    static void produce(KafkaBroker kafka, String topic, List<String> ids) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < ids.size(); i++) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0,
                        ids.get(i).getBytes(StandardCharsets.UTF_8), new Order(ids.get(i), 1).json());
                record.headers().add("trace-id", ("trace-" + i).getBytes(StandardCharsets.UTF_8));
                producer.send(record);
            }
            producer.flush();
        }
    }

    static long endOffset(KafkaBroker kafka, String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition(topic, 0);
            return consumer.endOffsets(List.of(partition)).get(partition);
        }
    }
}
