package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.TestRedisson;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer process killed with SIGKILL while its compensation runs, after the key was marked dead:
 * the next consumer takes the compensation over once its lease ends, and it completes exactly once.
 */
@IdemTestKit
class CompensationAfterKillIT {

    private static final Logger LOG = LoggerFactory.getLogger(CompensationAfterKillIT.class);
    private static final String KEY = "order-7";

    @Test
    void guardedACompensationCutOffByKillNineRunsExactlyOnceAfterTheRestart(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names) throws Exception {
        try (Connection connection = postgres.connect()) {
            LedgerFixture.createTables(connection, "postgresql");
        }
        killDuringCompensationThenRestart(kafka, redis, names,
                List.of("ledger", postgres.jdbcUrl(), postgres.user(), postgres.password()));
    }

    @Test
    void inRedisOnlyModeACompensationCutOffByKillNineRunsExactlyOnceAfterTheRestart(
            KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        killDuringCompensationThenRestart(kafka, redis, names, List.of("none"));
    }

    private void killDuringCompensationThenRestart(KafkaBroker kafka, RedisEndpoint redis, TestNames names,
                                                   List<String> guard) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        kafka.createTopic(topic + ".DLT", 1);
        Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "compensation-");
        Path first = dir.resolve("first");
        Path second = dir.resolve("second");
        send(kafka, topic);

        // Given a consumer process that dead-letters the poison record and is killed in its compensation
        Process killed = child(kafka, redis, names, first, true, guard);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> lines(first + ".started").size() == 1);
        } finally {
            killed.destroyForcibly().waitFor();   // SIGKILL: no shutdown hook, no finally
        }
        assertThat(lines(first + ".done")).isEmpty();

        // When a new consumer process starts
        Process restarted = child(kafka, redis, names, second, false, guard);
        try {
            // Then it finishes the compensation once, after the killed owner's compensation lease
            await().atMost(Duration.ofSeconds(60)).until(() -> lines(second + ".done").size() == 1);
            await().pollDelay(ChildCompensationMain.LEASE.multipliedBy(3)).atMost(Duration.ofSeconds(30))
                    .until(() -> true);
            assertThat(lines(second + ".done")).containsExactly("done " + KEY);
            assertThat(lines(second + ".started")).containsExactly("started " + KEY);
            assertThat(deadLetters(kafka, topic + ".DLT")).as("letters on the DLT").isEqualTo(1);
            RedissonClient redisson = TestRedisson.connect(redis);
            try {
                ClaimRecord record = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build()
                        .inspect(new IdempotencyKey(names.group(), topic, KEY)).orElseThrow();
                assertThat(record.state()).isEqualTo(ClaimRecord.State.DEAD);
                assertThat(record.compensation()).contains("ok");
            } finally {
                redisson.shutdown();
            }
            LOG.info("compensation killed by SIGKILL in one process ran once in the next ({})", guard.get(0));
        } finally {
            restarted.destroyForcibly().waitFor();
        }
    }

    private static Process child(KafkaBroker kafka, RedisEndpoint redis, TestNames names, Path out, boolean hang,
                                 List<String> guard) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), ChildCompensationMain.class.getName(),
                kafka.bootstrapServers(), names.group(), names.topic(), redis.uri().toString(), names.keyPrefix(),
                out.toString(), Boolean.toString(hang)));
        command.addAll(guard);
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(Path.of(out + ".log").toFile()).start();
    }

    private static void send(KafkaBroker kafka, String topic) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, KEY.getBytes(StandardCharsets.UTF_8),
                    "{\"sku\":\"A\"}".getBytes(StandardCharsets.UTF_8)));
        }
    }

    private static List<String> lines(String file) throws IOException {
        Path path = Path.of(file);
        return Files.exists(path) ? Files.readAllLines(path, StandardCharsets.UTF_8) : List.of();
    }

    private static int deadLetters(KafkaBroker kafka, String topic) {
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition(topic, 0);
            reader.assign(List.of(partition));
            reader.seekToBeginning(List.of(partition));
            long end = reader.endOffsets(List.of(partition)).get(partition);
            List<ConsumerRecord<byte[], byte[]>> all = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                reader.poll(Duration.ofMillis(100)).forEach(all::add);
                return reader.position(partition) >= end;
            });
            return all.size();
        }
    }
}
