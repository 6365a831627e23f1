package dev.idem.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

@IdemTestKit
class KafkaSmokeIT {

    private static final int MESSAGES = 1_000;

    @Test
    void everyProducedRecordIsConsumed(KafkaBroker kafka, TestNames names) {
        // Given a topic with three partitions and 1,000 records on it
        kafka.createTopic(names.topic(), 3);
        Set<String> sent = IntStream.range(0, MESSAGES).mapToObj(i -> "value-" + i).collect(Collectors.toSet());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer())) {
            sent.forEach(value -> producer.send(new ProducerRecord<>(names.topic(), value, value)));
            producer.flush();
        }

        // When a consumer group reads the topic from the start
        Set<String> received = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, names.group(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(names.topic()));
            await().atMost(Duration.ofSeconds(60)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> received.add(r.value()));
                return received.size() >= MESSAGES;
            });
        }

        // Then it has seen exactly the records that were sent
        assertThat(received).isEqualTo(sent);
    }

    @Test
    void readGivesBackEveryRecordWrittenSoFarWithItsHeaders(KafkaBroker kafka, TestNames names) {
        // Given two records, one with a header, on a topic of two partitions
        String topic = names.topic("read");
        kafka.createTopic(topic, 2);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer())) {
            ProducerRecord<String, String> letter = new ProducerRecord<>(topic, 1, "order-1", "{\"id\":1}");
            letter.headers().add("idem-reason", "attempts exhausted".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            producer.send(letter);
            producer.send(new ProducerRecord<>(topic, 0, "order-2", "{\"id\":2}"));
            producer.flush();
        }

        // When the topic is read back
        List<TopicMessage> read = kafka.read(topic);

        // Then both come back, in partition order, with key, body and headers
        assertThat(read).extracting(TopicMessage::keyText).containsExactly("order-2", "order-1");
        assertThat(read.get(1).header("idem-reason")).isEqualTo("attempts exhausted");
        assertThat(read.get(1).text()).isEqualTo("{\"id\":1}");
        assertThat(kafka.read(names.topic("never-created"))).isEmpty();
    }
}
