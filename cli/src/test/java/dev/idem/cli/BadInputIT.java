package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.DeadLetter;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.kafka.KafkaDeadLetterPublisher;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input and unreachable services: one clear line and exit code 2; a stack trace only with --verbose. */
@IdemTestKit
class BadInputIT {

    private static Operator operator(KafkaBroker kafka, RocketMqBroker rocketMq, RedisEndpoint redis, TestNames names,
                                     Path home) {
        return new Operator(Map.of("IDEM_KAFKA_BOOTSTRAP", kafka.bootstrapServers(), "IDEM_ROCKETMQ_NAMESRV",
                rocketMq.nameServerAddress(), "IDEM_REDIS_URL", redis.uri().toString(), "IDEM_KEY_PREFIX",
                names.keyPrefix()), home);
    }

    private static void assertOneLineError(Operator.Run run, String message) {
        assertThat(run.code()).as(run.toString()).isEqualTo(Idem.ERROR);
        assertThat(run.out()).as(run.toString()).isEmpty();
        assertThat(run.err().lines()).as(run.toString()).singleElement()
                .satisfies(line -> assertThat(line).startsWith("idem: ").contains(message));
    }

    @Test
    void unknownTopicsUnreachableServicesAndMalformedInputAreOneLineWithExitCodeTwo(
            KafkaBroker kafka, RocketMqBroker rocketMq, RedisEndpoint redis, TestNames names, @TempDir Path home) {
        Operator operator = operator(kafka, rocketMq, redis, names, home);

        assertOneLineError(operator.idem("dlq", "list", "-b", "kafka", "-t", "no-such-topic.DLT"),
                "topic no-such-topic.DLT does not exist on Kafka at " + kafka.bootstrapServers());
        assertOneLineError(operator.idem("dlq", "list", "-b", "rocketmq", "-t", "no-such-topic_DLQ"),
                "topic no-such-topic_DLQ does not exist on RocketMQ");
        assertOneLineError(operator.with("IDEM_KAFKA_BOOTSTRAP", "127.0.0.1:1").idem("dlq", "list", "-b", "kafka",
                "-t", "orders.DLT"), "cannot reach Kafka at 127.0.0.1:1");
        assertOneLineError(operator.with("IDEM_ROCKETMQ_NAMESRV", "127.0.0.1:1").idem("dlq", "list", "-b", "rocketmq",
                "-t", "orders_DLQ"), "cannot reach the RocketMQ name server at 127.0.0.1:1");
        assertOneLineError(operator.with("IDEM_REDIS_URL", "redis://127.0.0.1:1").idem("claims", "show", "g", "k",
                "-t", "orders"), "cannot reach Redis at redis://127.0.0.1:1");
        assertOneLineError(operator.idem("dlq", "list", "-b", "kafka", "-t", "orders.DLT", "--from", "yesterday"),
                "'yesterday' is not a time");
        assertOneLineError(operator.idem("dlq", "list", "-b", "pulsar", "-t", "orders.DLT"), "--broker");
        assertOneLineError(operator.idem("dlq", "replay", "-b", "kafka", "-t", "orders.DLT", "--entry", "17"),
                "a Kafka entry is <partition>:<offset>");
        assertOneLineError(operator.idem("dlq", "replay", "-b", "kafka", "-t", "orders.DLT"), "say which entries");
        assertOneLineError(operator.idem("dlq", "list", "--topic", "orders.DLT"), "--broker");
        assertOneLineError(operator.idem("dlq", "lsit"), "lsit");
        assertOneLineError(operator.idem("claims", "reset", "g", "k", "-t", "orders"), "add --yes");
        assertOneLineError(new Operator(Map.of(), home).idem("claims", "show", "g", "k", "-t", "orders"),
                "IDEM_REDIS_URL");
    }

    @Test
    void aStackTraceIsPrintedOnlyWithVerbose(KafkaBroker kafka, RocketMqBroker rocketMq, RedisEndpoint redis,
                                            TestNames names, @TempDir Path home) {
        Operator operator = operator(kafka, rocketMq, redis, names, home).with("IDEM_REDIS_URL", "redis://127.0.0.1:1");

        Operator.Run quiet = operator.idem("claims", "show", "g", "k", "-t", "orders");
        Operator.Run verbose = operator.idem("claims", "show", "g", "k", "-t", "orders", "--verbose");

        assertThat(quiet.err()).doesNotContain("\tat ");
        assertThat(verbose.code()).isEqualTo(Idem.ERROR);
        assertThat(verbose.err()).startsWith("idem: cannot reach Redis").contains("\tat ");
    }

    @Test
    void theLauncherRunsTheDistributionQuietlyWithItsExitCodes(KafkaBroker kafka, RocketMqBroker rocketMq,
                                                               RedisEndpoint redis, TestNames names,
                                                               @TempDir Path home) throws Exception {
        // Given a dead letter on a Kafka topic
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        try (KafkaDeadLetterPublisher publisher = KafkaDeadLetterPublisher.builder(Map.of("bootstrap.servers",
                kafka.bootstrapServers())).build()) {
            Envelope original = new Envelope(topic, 0, "0", topic + "-0@0", 1, Map.of(), new Order("o-1", 1).json(),
                    "o-1".getBytes(StandardCharsets.UTF_8));
            publisher.publish(new DeadLetter(new IdempotencyKey(names.group(), topic, "o-1"), 1L, original, 5,
                    "attempts exhausted", IllegalStateException.class.getName(), "boom", "", Instant.now(), Instant.now()));
        }
        Path launcher = Path.of(System.getProperty("idem.cli.distribution"), "bin", "idem");
        assertThat(launcher).isExecutable();

        // When bin/idem lists it, and then an unknown topic
        Process list = launch(launcher, kafka, redis, names, home, "dlq", "list", "--broker", "kafka", "--topic",
                topic + ".DLT");
        Process unknown = launch(launcher, kafka, redis, names, home, "dlq", "list", "-b", "kafka", "-t", "nope.DLT");
        Process rocketMqList = launch(launcher, kafka, redis, names, home, "dlq", "list", "-b", "rocketmq", "-t",
                "nope_DLQ", "--rocketmq-namesrv", rocketMq.nameServerAddress());

        // Then the table is on stdout, one summary line on stderr (no client logs), and exit codes 0 and 2
        assertThat(list.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(list.exitValue()).isZero();
        assertThat(read(list.getInputStream())).contains("ENTRY", "0:0", "o-1", "IllegalStateException");
        assertThat(read(list.getErrorStream()).lines().toList()).singleElement().asString().startsWith("1 of 1 entries");
        assertThat(unknown.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(unknown.exitValue()).isEqualTo(Idem.ERROR);
        assertThat(read(unknown.getErrorStream()).lines().toList()).singleElement().asString()
                .isEqualTo("idem: topic nope.DLT does not exist on Kafka at " + kafka.bootstrapServers());
        // ... and the RocketMQ client writes no log files into the operator's home
        assertThat(rocketMqList.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(rocketMqList.exitValue()).isEqualTo(Idem.ERROR);
        assertThat(read(rocketMqList.getErrorStream()).lines().toList()).singleElement().asString()
                .contains("topic nope_DLQ does not exist on RocketMQ");
        assertThat(home.resolve("logs")).doesNotExist();
    }

    private static Process launch(Path launcher, KafkaBroker kafka, RedisEndpoint redis, TestNames names, Path home,
                                  String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("IDEM_KAFKA_BOOTSTRAP", kafka.bootstrapServers());
        builder.environment().put("IDEM_REDIS_URL", redis.uri().toString());
        builder.environment().put("IDEM_KEY_PREFIX", names.keyPrefix());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JAVA_OPTS", "-Duser.home=" + home);
        return builder.start();
    }

    private static String read(java.io.InputStream stream) throws IOException {
        return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
    }
}
