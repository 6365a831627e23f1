package dev.idem.kafka.kill;

import dev.idem.core.spi.CompensationOutcome;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 * A consumer process that dies in its compensation (SIGKILL or {@code Runtime.halt}, inside the hook
 * or after it returned, before Idem records the outcome): the next consumer takes the compensation
 * over once its lease ends. A hook outside the ledger's transaction runs again then, with the same
 * compensation id to dedupe on; the ledger's transactional compensation refunds exactly once.
 */
@IdemTestKit
class CompensationAfterKillIT {

    private static final Logger LOG = LoggerFactory.getLogger(CompensationAfterKillIT.class);
    private static final String KEY = "order-7";

    @Test
    void guardedACompensationCutOffByKillNineRunsAgainOnceAfterTheRestartWithTheSameId(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names) throws Exception {
        Runs runs = dieThenRestart(kafka, redis, names, "hang", ledger(postgres, "ledger"));

        assertThat(runs.second.started()).containsExactly(runs.first.started().get(0));
        assertThat(runs.second.done()).containsExactly("done " + KEY + " " + runs.first.id());
    }

    @Test
    void inRedisOnlyModeACompensationCutOffByKillNineRunsAgainOnceAfterTheRestartWithTheSameId(
            KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        Runs runs = dieThenRestart(kafka, redis, names, "hang", List.of("none"));

        assertThat(runs.second.started()).containsExactly(runs.first.started().get(0));
        assertThat(runs.second.done()).containsExactly("done " + KEY + " " + runs.first.id());
    }

    /** The crash no code can close for an external hook: after it returned, before its record. */
    @Test
    void aHookWhoseProcessHaltsAfterItReturnedRunsAgainWithTheSameCompensationId(
            KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        Runs runs = dieThenRestart(kafka, redis, names, "halt-after", List.of("none"));

        assertThat(runs.first.done()).hasSize(1);
        assertThat(runs.second.started()).as("run again after the takeover")
                .containsExactly(runs.first.started().get(0));
    }

    @Test
    void aTransactionalCompensationHaltedInsideItsHookRefundsOnce(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names) throws Exception {
        Runs runs = dieThenRestart(kafka, redis, names, "halt-inside", ledger(postgres, "ledger-transactional"));

        assertThat(runs.first.done()).isEmpty();
        assertThat(runs.second.started()).as("the halted run's refund was rolled back: run again")
                .containsExactly(runs.first.started().get(0));
        assertThat(refunds(postgres, names)).isEqualTo(1);
    }

    @Test
    void aTransactionalCompensationHaltedAfterItsCommitRefundsOnceAndIsNotRunAgain(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names) throws Exception {
        Runs runs = dieThenRestart(kafka, redis, names, "halt-after", ledger(postgres, "ledger-transactional"));

        assertThat(runs.first.done()).hasSize(1);
        assertThat(runs.second.started()).as("the ledger's row says it ran: not again").isEmpty();
        assertThat(refunds(postgres, names)).isEqualTo(1);
    }

    /** What a consumer process's compensation wrote to its files. */
    private record Lines(List<String> started, List<String> done) {
        String id() {
            String line = started.get(0);
            return line.substring(line.lastIndexOf(' ') + 1);
        }
    }

    private record Runs(Lines first, Lines second) {
    }

    private static List<String> ledger(PostgresDatabase postgres, String kind) throws Exception {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            LedgerFixture.createTables(connection, "postgresql");
            statement.execute("create table if not exists refund (compensation_id varchar(32) not null, "
                    + "consumer_group varchar(255) not null, idempotency_key varchar(512) not null)");
        }
        return List.of(kind, postgres.jdbcUrl(), postgres.user(), postgres.password());
    }

    private static int refunds(PostgresDatabase postgres, TestNames names) throws Exception {
        try (Connection connection = postgres.connect();
             PreparedStatement select = connection.prepareStatement(
                     "select count(*) from refund where consumer_group = ?")) {
            select.setString(1, names.group());
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return rows.getInt(1);
            }
        }
    }

    /**
     * A first consumer process dies in its compensation as {@code mode} says; a second one, whose hook
     * returns, starts then: its compensation must be recorded once, with one dead letter.
     */
    private Runs dieThenRestart(KafkaBroker kafka, RedisEndpoint redis, TestNames names, String mode,
                                List<String> guard) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        kafka.createTopic(topic + ".DLT", 1);
        Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "compensation-");
        Path first = dir.resolve("first");
        Path second = dir.resolve("second");
        send(kafka, topic);

        // Given a consumer process that dead-letters the poison record and dies in its compensation
        Process dying = child(kafka, redis, names, first, mode, guard);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> lines(first + ".started").size() == 1);
            if (mode.equals("hang")) {
                dying.destroyForcibly();   // SIGKILL: no shutdown hook, no finally
            }
            assertThat(dying.waitFor(30, TimeUnit.SECONDS)).as("the first process died").isTrue();
        } finally {
            dying.destroyForcibly().waitFor();
        }
        Lines died = new Lines(lines(first + ".started"), lines(first + ".done"));

        // When a new consumer process starts
        Process restarted = child(kafka, redis, names, second, "return", guard);
        try {
            // Then it finishes the compensation, after the dead owner's compensation lease, and records it
            RedissonClient redisson = TestRedisson.connect(redis);
            try {
                RedisClaimStore store = RedisClaimStore.builder(redisson).keyPrefix(names.keyPrefix()).build();
                IdempotencyKey key = new IdempotencyKey(names.group(), topic, KEY);
                await().atMost(Duration.ofSeconds(60)).until(() -> store.inspect(key).orElseThrow().compensation()
                        .filter(outcome -> !outcome.isPending()).isPresent());
                await().pollDelay(ChildCompensationMain.LEASE.multipliedBy(3)).atMost(Duration.ofSeconds(30))
                        .until(() -> true);
                ClaimRecord record = store.inspect(key).orElseThrow();
                assertThat(record.state()).isEqualTo(ClaimRecord.State.DEAD);
                assertThat(record.compensation()).contains(CompensationOutcome.OK);
            } finally {
                redisson.shutdown();
            }
            Lines after = new Lines(lines(second + ".started"), lines(second + ".done"));
            assertThat(after.done()).as("compensations finished by the second process").hasSize(1);
            assertThat(after.done().get(0)).endsWith(" " + died.id());
            assertThat(deadLetters(kafka, topic + ".DLT")).as("letters on the DLT").isEqualTo(1);
            LOG.info("{} in one process ({}): the next one finished it; started {} then {}", mode, guard.get(0),
                    died.started(), after.started());
            return new Runs(died, after);
        } finally {
            restarted.destroyForcibly().waitFor();
        }
    }

    private static Process child(KafkaBroker kafka, RedisEndpoint redis, TestNames names, Path out, String mode,
                                 List<String> guard) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), ChildCompensationMain.class.getName(),
                kafka.bootstrapServers(), names.group(), names.topic(), redis.uri().toString(), names.keyPrefix(),
                out.toString(), mode));
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
