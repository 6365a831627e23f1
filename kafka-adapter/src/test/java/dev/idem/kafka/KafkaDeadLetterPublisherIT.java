package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.DeadLetterRouting;
import dev.idem.core.Envelope;
import dev.idem.core.spi.DeadLetterPublisher;
import dev.idem.core.spi.DeadLetterPublisherContract;
import dev.idem.kafka.internal.KafkaEnvelopes;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The dead-letter contract on the test kit's Kafka broker, and what only Kafka records can carry. */
@IdemTestKit
class KafkaDeadLetterPublisherIT extends DeadLetterPublisherContract {

    private static KafkaBroker kafka;

    @BeforeAll
    static void broker(KafkaBroker broker) {
        kafka = broker;
    }

    @Override
    protected void createTopic(String topic) {
        kafka.createTopic(topic, 1);
    }

    @Override
    protected Envelope sendAndConsume(String topic, Original original) {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0,
                original.key() == null ? null : original.key().getBytes(StandardCharsets.UTF_8), original.body());
        original.headers().forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        return KafkaEnvelopes.of(sendAndConsume(record));
    }

    /** Sends the record as it is and returns it as a consumer reading bytes receives it. */
    private static ConsumerRecord<byte[], byte[]> sendAndConsume(ProducerRecord<byte[], byte[]> record) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(record);
        }
        return first(record.topic());
    }

    @Override
    protected DeadLetterPublisher publisher(DeadLetterRouting routing) {
        return KafkaDeadLetterPublisher.builder(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))
                .routing(routing).build();
    }

    @Override
    protected String deadLetterSuffix() {
        return ".DLT";
    }

    @Override
    protected Received readFirst(String topic) {
        ConsumerRecord<byte[], byte[]> record = first(topic);
        List<Entry<String, String>> headers = new ArrayList<>();
        for (Header header : record.headers()) {
            headers.add(new SimpleImmutableEntry<>(header.key(),
                    header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8)));
        }
        return new Received(record.key(), record.value(), headers);
    }

    /** The first record of a topic, from its beginning, across its partitions. */
    private static ConsumerRecord<byte[], byte[]> first(String topic) {
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = reader.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            reader.assign(partitions);
            reader.seekToBeginning(partitions);
            List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                reader.poll(Duration.ofMillis(100)).forEach(read::add);
                return !read.isEmpty();
            });
            return read.get(0);
        }
    }

    @Test
    void repeatedBinaryAndValuelessHeadersArriveByteForByte() throws Exception {
        // Given a record with a repeated header, a binary one, one without a value and an old idem- one
        byte[] binary = {(byte) 0xff, 0x00, (byte) 0xfe};
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(source(), 0, bytes("order-42"), bytes("{}"));
        record.headers().add("trace", bytes("a")).add("trace", bytes("b")).add("binary", binary)
                .add("no-value", null).add("empty", new byte[0]).add("idem-reason", bytes("an earlier letter"));
        Envelope original = KafkaEnvelopes.of(sendAndConsume(record));

        // When it is dead-lettered
        publisher().publish(letter(original, 5, "attempts exhausted", new IllegalStateException("boom")));

        // Then the original headers arrive as they were, in order, and Idem's once
        ConsumerRecord<byte[], byte[]> deadLetter = first(deadLetterTopic());
        List<Header> originals = new ArrayList<>();
        deadLetter.headers().forEach(h -> {
            if (!DeadLetterHeaders.isIdemHeader(h.key())) {
                originals.add(h);
            }
        });
        assertThat(originals).extracting(Header::key).containsExactly("trace", "trace", "binary", "no-value", "empty");
        assertThat(originals).extracting(Header::value)
                .containsExactly(bytes("a"), bytes("b"), binary, null, new byte[0]);
        assertThat(deadLetter.headers().headers("idem-reason")).singleElement()
                .satisfies(h -> assertThat(h.value()).isEqualTo(bytes("attempts exhausted")));
    }

    @Test
    void aTombstoneStaysATombstoneWithItsKey() throws Exception {
        Envelope original = KafkaEnvelopes.of(sendAndConsume(new ProducerRecord<>(source(), 0, bytes("order-42"), null)));

        publisher().publish(letter(original, 0, "undecodable payload", new IllegalArgumentException("no body")));

        ConsumerRecord<byte[], byte[]> deadLetter = first(deadLetterTopic());
        assertThat(deadLetter.key()).isEqualTo(bytes("order-42"));
        assertThat(deadLetter.value()).isNull();
    }

    @Test
    void aMissingDeadLetterTopicIsCreatedLikeItsSourceAndTheLetterKeepsItsPartition() throws Exception {
        // Given a source topic of three partitions, a record on the last one, and no dead-letter topic
        String topic = names().topic("three");
        kafka.createTopic(topic, 3);
        Envelope original = KafkaEnvelopes.of(sendAndConsume(new ProducerRecord<>(topic, 2, bytes("order-42"), bytes("{}"))));

        // When it is dead-lettered
        publisher().publish(letter(original, 5, "attempts exhausted", new IllegalStateException("boom")));

        // Then the dead-letter topic has three partitions, and the letter is on the same one
        try (Admin admin = Admin.create(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            assertThat(admin.describeTopics(List.of(topic + ".DLT")).allTopicNames().get().get(topic + ".DLT")
                    .partitions()).hasSize(3);
        }
        assertThat(first(topic + ".DLT").partition()).isEqualTo(2);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
