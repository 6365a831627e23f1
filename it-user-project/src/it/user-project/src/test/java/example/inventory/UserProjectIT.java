package example.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What a user's build gets from idem-bom and Idem's modules: the app runs in a JVM of its own on
 * exactly its runtime classpath (no test kit, no brokers on it), against the test kit's brokers
 * and Redis in this JVM.
 */
@IdemTestKit
class UserProjectIT {

    private static final int ORDERS = 50;
    // Jar names as Maven lays them out: <artifactId>-<version>[-classifier].jar
    private static final Pattern JACKSON = Pattern.compile("(jackson-[a-z0-9-]+?)-(\\d+\\.\\d+(?:\\.\\d+)?)\\.jar");
    private static final Pattern NETTY = Pattern.compile("(netty-[a-z0-9-]+?)-(\\d+\\.\\d+\\.\\d+\\.Final)(?:-[a-z0-9_-]+)?\\.jar");

    @Test
    void theBomGivesTheAppOneJacksonOneNettyAndNoBrokerLibraries() throws IOException {
        List<String> jars = runtimeClasspath().stream().map(p -> Path.of(p).getFileName().toString()).toList();

        assertEquals(Set.of("2.21.2"), versions(jars, JACKSON, "jackson-annotations"), "Jackson versions in " + jars);
        assertTrue(jars.contains("jackson-annotations-2.21.jar"), "jackson-annotations of the 2.21 line in " + jars);
        assertEquals(1, versions(jars, NETTY, null).size(), "Netty versions in " + jars);
        for (String unwanted : List.of("micrometer", "fastjson-1", "rocketmq-rocksdb", "opentelemetry-exporter", "prometheus",
                "grpc-", "okhttp", "kotlin-stdlib", "awaitility", "netty-all", "testcontainers", "kafka_2.13",
                "rocketmq-broker")) {
            assertTrue(jars.stream().noneMatch(jar -> jar.startsWith(unwanted)),
                    unwanted + " must not be on the app's runtime classpath: " + jars);
        }
    }

    @Test
    void theReadmeKafkaExampleMovesStockOnceForOrdersSentTwice(
            KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        kafka.createTopic(names.topic(), 3);

        String output = runApp(runtimeClasspath(), "kafka", kafka.bootstrapServers(), names, redis);

        assertTrue(output.contains("kafka-clients 4.3.1"), output);
        assertTrue(output.contains("stock movements: " + ORDERS + ", orders: " + ORDERS), output);
    }

    @Test
    void theReadmeKafkaExampleOnTheOldestClaimedKafkaClientMovesStockOncePerOrder(
            KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        kafka.createTopic(names.topic(), 3);
        String oldest = System.getProperty("app.oldest.kafka.clients");
        List<String> classpath = runtimeClasspath().stream()
                .map(jar -> Path.of(jar).getFileName().toString().startsWith("kafka-clients-") ? oldest : jar)
                .toList();
        assertTrue(classpath.contains(oldest), "kafka-clients replaced by " + oldest + " in " + classpath);

        String output = runApp(classpath, "kafka", kafka.bootstrapServers(), names, redis);

        assertTrue(output.contains("kafka-clients 3.9.1"), output);
        assertTrue(output.contains("stock movements: " + ORDERS + ", orders: " + ORDERS), output);
    }

    @Test
    void theLeanRocketMqClientMovesStockOnceForOrdersSentTwice(
            RocketMqBroker rocketMq, RedisEndpoint redis, TestNames names) throws Exception {
        rocketMq.createTopic(names.topic(), 4);
        rocketMq.createRetryTopic(names.group());

        String output = runApp(runtimeClasspath(), "rocketmq", rocketMq.nameServerAddress(), names, redis);

        assertTrue(output.contains("stock movements: " + ORDERS + ", orders: " + ORDERS), output);
    }

    private static List<String> runtimeClasspath() throws IOException {
        String file = Files.readString(Path.of(System.getProperty("app.classpath.file")), StandardCharsets.UTF_8);
        return Arrays.stream(file.trim().split(File.pathSeparator)).filter(s -> !s.isBlank()).toList();
    }

    private static Set<String> versions(List<String> jars, Pattern pattern, String skip) {
        Set<String> versions = new TreeSet<>();
        for (String jar : jars) {
            Matcher matcher = pattern.matcher(jar);
            if (matcher.matches() && !matcher.group(1).equals(skip)) {
                versions.add(matcher.group(2));
            }
        }
        return versions;
    }

    private static String runApp(List<String> classpath, String broker, String address, TestNames names,
                                 RedisEndpoint redis) throws Exception {
        List<String> entries = new ArrayList<>();
        entries.add(System.getProperty("app.classes"));
        entries.addAll(classpath);
        Path log = Files.createTempFile(Path.of(System.getProperty("app.classes")).getParent(), "app-" + broker, ".log");
        Process app = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-Duser.home=" + log.getParent(),
                "-Drocketmq.client.logUseSlf4j=true",
                "-cp", entries.stream().collect(Collectors.joining(File.pathSeparator)),
                OrderApp.class.getName(),
                broker, address, names.topic(), names.group(), redis.uri().toString(), names.keyPrefix(),
                String.valueOf(ORDERS))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        boolean exited = app.waitFor(120, TimeUnit.SECONDS);
        if (!exited) {
            app.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(exited, "the app did not finish within 120 s:\n" + output);
        assertEquals(0, app.exitValue(), "the app failed:\n" + output);
        return output;
    }
}
