package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Consumers in separate processes on one host, as in production. */
@IdemTestKit
class ConsumerProcessesIT {

    private static final Logger LOG = LoggerFactory.getLogger(ConsumerProcessesIT.class);
    private static final int PROCESSES = 3;
    private static final int QUEUES = 6;
    private static final int MESSAGES = 600;

    @Test
    void threeConsumerProcessesOnOneHostEachHaveTheirOwnQueuesAndConsumeEverything(
            RocketMqBroker rocketMq, RedisEndpoint redis, TestNames names) throws Exception {
        String topic = names.topic();
        String group = names.group();
        rocketMq.createTopic(topic, QUEUES);
        rocketMq.createTopic(topic + "_DLQ", 1);
        rocketMq.createRetryTopic(group);
        Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "consumers-");
        List<Process> processes = new ArrayList<>();
        try {
            // Given three consumer JVMs of one group, started alike on this host
            for (int i = 0; i < PROCESSES; i++) {
                processes.add(child(rocketMq, redis, names, group, topic, dir.resolve("consumer-" + i)));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> started(dir) == PROCESSES);
            // The broker tells each consumer of the others; let the rebalance settle.
            await().pollDelay(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(11)).until(() -> true);

            // When
            send(rocketMq, names, topic);

            // Then
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                    .until(() -> consumedKeys(dir).size() == MESSAGES);
            List<Set<Integer>> queues = new ArrayList<>();
            for (int i = 0; i < PROCESSES; i++) {
                queues.add(queuesOf(dir.resolve("consumer-" + i)));
            }
            LOG.info("{} consumer processes on one host, queues consumed: {}", PROCESSES, queues);
            Set<Integer> all = new HashSet<>();
            for (Set<Integer> own : queues) {
                assertThat(own).as("queues of one process").isNotEmpty();
                assertThat(all).as("queues taken by two processes").doesNotContainAnyElementsOf(own);
                all.addAll(own);
            }
            assertThat(all).hasSize(QUEUES);
        } finally {
            for (Process process : processes) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    private static Process child(RocketMqBroker rocketMq, RedisEndpoint redis, TestNames names, String group,
                                 String topic, Path out) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx256m",
                "-Duser.home=" + System.getProperty("user.home"),
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-Drocketmq.client.logUseSlf4j=true",
                "-cp", System.getProperty("java.class.path"), ChildConsumerMain.class.getName(),
                rocketMq.nameServerAddress(), group, topic, redis.uri().toString(), names.keyPrefix(), out.toString())
                .redirectErrorStream(true).redirectOutput(Path.of(out + ".log").toFile()).start();
    }

    private static long started(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.toString().endsWith(".started")).count();
        }
    }

    private static void send(RocketMqBroker rocketMq, TestNames names, String topic) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(names.group("producer"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            for (int i = 0; i < MESSAGES; i++) {
                Message message = new Message(topic, ("payload " + i).getBytes(StandardCharsets.UTF_8));
                message.setKeys("key-" + i);
                producer.send(message);
            }
        } finally {
            producer.shutdown();
        }
    }

    private static List<String[]> lines(Path out) throws IOException {
        if (!Files.exists(out)) {
            return List.of();
        }
        return Files.readAllLines(out, StandardCharsets.UTF_8).stream()
                .filter(line -> !line.isBlank()).map(line -> line.split(" ", 2)).toList();
    }

    private static Set<String> consumedKeys(Path dir) throws IOException {
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < PROCESSES; i++) {
            lines(dir.resolve("consumer-" + i)).forEach(line -> keys.add(line[1]));
        }
        return keys;
    }

    private static Set<Integer> queuesOf(Path out) throws IOException {
        Set<Integer> queues = new TreeSet<>();
        lines(out).forEach(line -> queues.add(Integer.parseInt(line[0])));
        return queues;
    }
}
