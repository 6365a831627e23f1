package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.DeadLetter;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long {@code idem dlq list} with a filter takes on a dead-letter topic of 100,000 entries, each
 * with Idem's headers and a 2 KB stack trace. Not part of the build (minutes of producing):
 * {@code ./mvnw -B verify -pl cli -am -Didem.cli.bench=true -Dit.test=ScanBenchmarkIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}.
 */
@IdemTestKit
@EnabledIfSystemProperty(named = "idem.cli.bench", matches = "true")
class ScanBenchmarkIT {

    private static final Logger LOG = LoggerFactory.getLogger(ScanBenchmarkIT.class);
    private static final int ENTRIES = Integer.getInteger("idem.cli.bench.entries", 100_000);

    @Test
    void kafka(KafkaBroker kafka, RedisEndpoint redis, TestNames names, @TempDir Path home) {
        String dlt = names.topic() + ".DLT";
        kafka.createTopic(dlt, 3);
        long started = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < ENTRIES; i++) {
                DeadLetter letter = letter(names, i);
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(dlt, letter.envelope().messageKey(),
                        letter.envelope().body());
                letter.idemHeaders().forEach((k, v) -> record.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
                producer.send(record);
            }
            producer.flush();
        }
        LOG.info("Kafka: {} dead letters written in {} ms", ENTRIES, (System.nanoTime() - started) / 1_000_000);
        measure(new Operator(Map.of("IDEM_KAFKA_BOOTSTRAP", kafka.bootstrapServers(), "IDEM_REDIS_URL",
                redis.uri().toString(), "IDEM_KEY_PREFIX", names.keyPrefix()), home), "kafka", dlt, names);
    }

    @Test
    void rocketMq(RocketMqBroker rocketMq, RedisEndpoint redis, TestNames names, @TempDir Path home) throws Exception {
        String dlq = names.topic() + "_DLQ";
        rocketMq.createTopic(dlq, 4);
        long started = System.nanoTime();
        DefaultMQProducer producer = new DefaultMQProducer(names.group("bench"));
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < ENTRIES; i++) {
                DeadLetter letter = letter(names, i);
                Message message = new Message(dlq, null, "order-" + i, letter.envelope().body());
                letter.idemHeaders().forEach(message::putUserProperty);
                batch.add(message);
                if (batch.size() == 64 || i == ENTRIES - 1) {
                    producer.send(batch);
                    batch.clear();
                }
            }
        } finally {
            producer.shutdown();
        }
        LOG.info("RocketMQ: {} dead letters written in {} ms", ENTRIES, (System.nanoTime() - started) / 1_000_000);
        measure(new Operator(Map.of("IDEM_ROCKETMQ_NAMESRV", rocketMq.nameServerAddress(), "IDEM_REDIS_URL",
                redis.uri().toString(), "IDEM_KEY_PREFIX", names.keyPrefix()), home), "rocketmq", dlq, names);
    }

    private static void measure(Operator operator, String broker, String topic, TestNames names) {
        for (String[] filter : List.of(new String[] {"--key", "order-77777"},
                new String[] {"--exception", "TimeoutException", "--limit", "5"})) {
            for (int run = 1; run <= 3; run++) {
                List<String> args = new ArrayList<>(List.of("dlq", "list", "-b", broker, "-t", topic));
                args.addAll(List.of(filter));
                long started = System.nanoTime();
                Operator.Run list = operator.idem(args.toArray(String[]::new));
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertThat(list.code()).as(list.toString()).isZero();
                assertThat(list.err()).contains("of " + ENTRIES + " entries");
                LOG.info("{}: dlq list {} over {} entries: {} ms in all; {}", broker, String.join(" ", filter), ENTRIES,
                        millis, list.err().strip());
            }
        }
    }

    /** A dead letter as Idem writes it: a small JSON order, Idem's headers, a 2 KB stack trace. */
    private static DeadLetter letter(TestNames names, int i) {
        String id = "order-" + i;
        Envelope envelope = new Envelope(names.topic(), i % 3, Integer.toString(i), names.topic() + "@" + i, 1, Map.of(),
                new Order(id, 1).json(), id.getBytes(StandardCharsets.UTF_8));
        String exception = i % 10 == 0 ? "java.util.concurrent.TimeoutException" : "java.lang.IllegalStateException";
        return new DeadLetter(new IdempotencyKey(names.group(), names.topic(), id), 1L, envelope, 5,
                "attempts exhausted",
                exception, "no stock for " + id, STACK_TRACE, Instant.now(), Instant.now());
    }

    private static final String STACK_TRACE = ("java.lang.IllegalStateException: no stock\n"
            + "\tat com.example.inventory.StockService.deduct(StockService.java:42)\n").repeat(28);
}
