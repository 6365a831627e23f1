package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.DeadLetter;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.internal.Failures;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An incident's dead-letter topic: 10,000 letters from five causes fall into five failure groups with
 * exact counts, and a replay by group sends exactly that group's messages.
 */
@IdemTestKit
class FailureGroupsIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    // Five causes: one exception class at two sites is two groups; one site with varying messages is one.
    private static final Map<String, Supplier<Throwable>> CAUSES = Map.of(
            "stock", () -> Stock.reserve(),
            "payment", () -> Payments.capture(),
            "price", () -> Prices.parse(),
            "address", () -> Addresses.lookup(),
            "undecodable", () -> null);
    private static final Map<String, Integer> COUNTS = Map.of("stock", 4000, "payment", 3000, "price", 1500,
            "address", 1000, "undecodable", 500);

    @Test
    void tenThousandLettersFromFiveCausesAreFiveGroupsAndAReplayByGroupSendsThatGroup(
            KafkaBroker kafka, RedisEndpoint redis, TestNames names, @TempDir Path home)
            throws Exception {
        String topic = names.topic();
        String dlt = topic + ".DLT";
        kafka.createTopic(topic, 1);
        kafka.createTopic(dlt, 1);
        Map<String, Set<String>> keysByCause = write(kafka, names, topic, dlt);
        Operator operator = new Operator(Map.of("IDEM_REDIS_URL", redis.uri().toString(), "IDEM_KEY_PREFIX",
                names.keyPrefix(), "IDEM_KAFKA_BOOTSTRAP", kafka.bootstrapServers()), home);

        Operator.Run listed = operator.idem("dlq", "list", "-b", "kafka", "-t", dlt, "--groups", "-o", "json");
        assertThat(listed.code()).as(listed.toString()).isZero();
        JsonNode groups = JSON.readTree(listed.out());
        assertThat(groups).hasSize(5);
        Map<Integer, JsonNode> byCount = new HashMap<>();
        groups.forEach(group -> byCount.put(group.get("count").asInt(), group));
        assertThat(byCount.keySet()).containsExactlyInAnyOrderElementsOf(COUNTS.values());
        assertThat(byCount.get(4000).get("site").asText()).startsWith(Stock.class.getName() + ".reserve(");
        assertThat(byCount.get(3000).get("site").asText()).startsWith(Payments.class.getName() + ".capture(");
        assertThat(byCount.get(4000).get("exception").asText()).isEqualTo(byCount.get(3000).get("exception").asText());
        assertThat(byCount.get(1500).get("exception").asText()).isEqualTo(NumberFormatException.class.getName());
        assertThat(byCount.get(500).get("reason").asText()).isEqualTo("undecodable payload");
        Operator.Run table = operator.idem("dlq", "list", "-b", "kafka", "-t", dlt, "--groups");
        assertThat(table.out()).contains("GROUP", "COUNT", "EXCEPTION", "AT", "FIRST", "LAST",
                byCount.get(1000).get("group").asText());

        // The operator fixed the address lookup: the group's letters, and only them, are replayed.
        String addresses = byCount.get(1000).get("group").asText();
        Operator.Run shown = operator.idem("dlq", "show", "-b", "kafka", "-t", dlt, "--failure-group", addresses);
        assertThat(shown.out()).as(shown.toString()).contains("failure group " + addresses, "1000 entries",
                Addresses.class.getName() + ".lookup(");
        Operator.Run replay = operator.idem("dlq", "replay", "-b", "kafka", "-t", dlt, "--failure-group", addresses,
                "--yes");
        assertThat(replay.code()).as(replay.toString()).isZero();
        assertThat(replay.out()).contains("sent 1000, refused 0, failed 0");
        assertThat(keysOn(kafka, topic)).hasSize(1000).containsExactlyInAnyOrderElementsOf(keysByCause.get("address"));
    }

    /** Writes the letters, interleaved, as Idem's publisher writes their headers; returns each cause's keys. */
    private static Map<String, Set<String>> write(KafkaBroker kafka, TestNames names, String topic, String dlt) {
        Map<String, Set<String>> keys = new HashMap<>();
        List<String> order = new ArrayList<>();
        COUNTS.forEach((cause, count) -> {
            for (int i = 0; i < count; i++) {
                order.add(cause);
            }
        });
        java.util.Collections.shuffle(order, new java.util.Random(7));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            Instant at = Instant.parse("2026-11-27T03:00:00Z");
            for (int i = 0; i < order.size(); i++) {
                String cause = order.get(i);
                String key = cause + "-" + i;
                keys.computeIfAbsent(cause, c -> new HashSet<>()).add(key);
                Throwable failure = CAUSES.get(cause).get();
                Envelope envelope = new Envelope(topic, 0, Integer.toString(i), topic + "-0@" + i, 5, Map.of(),
                        new Order(key, 1).json());
                DeadLetter letter = new DeadLetter(new IdempotencyKey(names.group(), topic, key), i + 1, envelope,
                        failure == null ? 0 : 5, failure == null ? "undecodable payload" : "attempts exhausted",
                        failure == null ? "" : failure.getClass().getName(), failure == null ? "" : Failures.message(failure),
                        Failures.stackTrace(failure), at, at.plusSeconds(i));
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(dlt, 0, key.getBytes(StandardCharsets.UTF_8),
                        envelope.body());
                letter.headers().forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
                producer.send(record);
            }
            producer.flush();
        }
        return keys;
    }

    private static List<String> keysOn(KafkaBroker kafka, String topic) {
        List<String> keys = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            org.apache.kafka.common.TopicPartition partition = new org.apache.kafka.common.TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofSeconds(1))) {
                    keys.add(new String(record.key(), StandardCharsets.UTF_8));
                }
            }
        }
        return keys;
    }

    /** Application code that fails: each class is one site. */
    static final class Stock {
        static Throwable reserve() {
            return new IllegalStateException("no stock for sku-" + System.nanoTime() % 97);
        }
    }

    static final class Payments {
        static Throwable capture() {
            return new IllegalStateException("card declined");
        }
    }

    static final class Prices {
        static Throwable parse() {
            try {
                Integer.parseInt("12,50");
                throw new AssertionError("parsed");
            } catch (NumberFormatException e) {
                return e;
            }
        }
    }

    static final class Addresses {
        static Throwable lookup() {
            return new java.io.UncheckedIOException(new java.io.IOException("address service timed out"));
        }
    }
}
