package dev.idem.micronaut;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.micronaut.app.Effects;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.ApplicationContext;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * An existing micronaut-kafka {@code @KafkaListener} with {@code @Idempotent}: duplicates run once,
 * a record whose key another instance holds (Busy) is redelivered by micronaut-kafka until the key
 * is free and then runs once, a poison record is dead-lettered once with one compensation, and
 * nothing is left uncommitted.
 */
@IdemTestKit
class WrappedKafkaListenerIT {

    @Test
    void idemDecidesRedeliveryAndTheDeadLetter(KafkaBroker kafka, RedisEndpoint redis, TestNames names) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".DLT", 1);
        Map<String, Object> p = new HashMap<>();
        p.put("test.wrapped.topic", topic);
        p.put("test.wrapped.group", names.group());
        p.put("kafka.bootstrap.servers", kafka.bootstrapServers());
        p.put("idem.redis.address", redis.uri().toString());
        p.put("idem.redis.key-prefix", names.keyPrefix());
        // Configuration overrides the annotation's maxAttempts = 4, by the listener's name.
        p.put("idem.listeners.wrapped-orders.max-attempts", "3");
        try (ApplicationContext context = ApplicationContext.run(p)) {
            Effects effects = context.getBean(Effects.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                ids.add("w-" + i);
            }
            // Both listener threads hold one partition each before anything is sent, so the two slow copies
            // run side by side once their key is free.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> partitionsPerMember(kafka, names.group()).equals(List.of(1, 1)));
            // Another instance holds slow-1: both copies are Busy and redelivered until it lets go. (The two
            // threads here share one processor, so a copy the other thread holds is found done, not Busy.)
            try (AnotherInstance other = AnotherInstance.holding(redis, names.keyPrefix(),
                    new IdempotencyKey(names.group(), topic, "slow-1"), Duration.ofSeconds(60));
                 KafkaProducer<String, String> producer = producer(kafka)) {
                // The slow one on both partitions at once.
                producer.send(new ProducerRecord<>(topic, 0, "slow-1", "slow")).get();
                producer.send(new ProducerRecord<>(topic, 1, "slow-1", "slow")).get();
                for (int copy = 0; copy < 3; copy++) {
                    for (String id : ids) {
                        producer.send(new ProducerRecord<>(topic, (copy + id.hashCode()) & 1, id, "ok")).get();
                    }
                }
                producer.send(new ProducerRecord<>(topic, 0, "poison-1", "poison")).get();
                producer.send(new ProducerRecord<>(topic, 1, "poison-1", "poison")).get();
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                        .until(() -> busy(meters) >= 2);
                assertThat(effects.calls("wrapped", "slow-1")).as("slow-1 runs while another instance holds it")
                        .isZero();
                other.close();
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300))
                    .until(() -> effects.compensations("wrapped", "poison-1") == 1 && lag(kafka, topic, names.group()) == 0);
            // Stragglers (late copies, redeliveries) may still arrive: nothing runs twice for 2 s.
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(300))
                    .untilAsserted(() -> {
                        for (String id : ids) {
                            assertThat(effects.calls("wrapped", id)).as("calls of " + id).isEqualTo(1);
                        }
                    });
            assertThat(effects.calls("wrapped", "slow-1")).isEqualTo(1);
            assertThat(effects.calls("wrapped", "poison-1")).as("poison attempts").isEqualTo(3);
            assertThat(effects.compensations("wrapped", "poison-1")).isEqualTo(1);
            assertThat(deadLetterKeys(kafka, topic + ".DLT")).containsExactly("poison-1");
            assertThat(lag(kafka, topic, names.group())).isZero();
        }
    }

    /**
     * The wait for the listener's two threads (above) starts before they joined: a group no member has
     * joined yet has no members, rather than failing the wait (the broker answers GroupIdNotFoundException;
     * CI failed on it once, the listener joining later than the wait's first look).
     */
    @Test
    void aGroupNoMemberJoinedYetHasNoMembers(KafkaBroker kafka, TestNames names) throws Exception {
        assertThat(partitionsPerMember(kafka, names.group())).isEmpty();
    }

    /**
     * The application stops while a wrapped record runs: micronaut-kafka lets the handler finish,
     * and Idem's processor, dead-letter producer and Redis client must still be open then, so its
     * completion is recorded (the key reads Done, and no copy runs it again in Redis-only mode).
     */
    @Test
    void aRecordRunningWhenTheApplicationStopsIsCompletedInRedis(KafkaBroker kafka, RedisEndpoint redis,
                                                                  TestNames names) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".DLT", 1);
        Map<String, Object> p = new HashMap<>();
        p.put("test.wrapped.topic", topic);
        p.put("test.wrapped.group", names.group());
        p.put("kafka.bootstrap.servers", kafka.bootstrapServers());
        p.put("idem.redis.address", redis.uri().toString());
        p.put("idem.redis.key-prefix", names.keyPrefix());
        ApplicationContext context = ApplicationContext.run(p);
        try {
            Effects effects = context.getBean(Effects.class);
            try (KafkaProducer<String, String> producer = producer(kafka)) {
                producer.send(new ProducerRecord<>(topic, 0, "slow-at-stop", "slow")).get();
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.calls("wrapped", "slow-at-stop") == 1);
        } finally {
            context.close();   // the handler is in its one-second sleep
        }

        // The completion is sent without waiting (decision 0007): give it its moment.
        ClaimsAfterStop.awaitDone(redis, names.keyPrefix(),
                new IdempotencyKey(names.group(), topic, "slow-at-stop"), Duration.ofSeconds(5));
    }

    @Test
    void aListenerMicronautKafkaWouldCommitPastFailsStartUp(RedisEndpoint redis, TestNames names) {
        Map<String, Object> p = new HashMap<>();
        p.put("test.unsafe.topic", names.topic());
        p.put("kafka.bootstrap.servers", "127.0.0.1:1");
        p.put("idem.redis.address", redis.uri().toString());
        Throwable thrown = MicronautStartupFailuresIT.startAndStop(p);
        StringBuilder messages = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        assertThat(messages.toString()).contains("errorStrategy").contains("RETRY_ON_ERROR")
                .contains("retryCount = Integer.MAX_VALUE");
    }

    private static double busy(MeterRegistry meters) {
        return meters.find("idem.outcomes").tag("outcome", "busy").tag("listener", "wrapped-orders").counters()
                .stream().mapToDouble(c -> c.count()).sum();
    }

    private static KafkaProducer<String, String> producer(KafkaBroker kafka) {
        Properties props = new Properties();
        props.put("bootstrap.servers", kafka.bootstrapServers());
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        return new KafkaProducer<>(props);
    }

    private static List<String> deadLetterKeys(KafkaBroker kafka, String topic) {
        Properties props = new Properties();
        props.put("bootstrap.servers", kafka.bootstrapServers());
        props.put("group.id", "dlt-" + System.nanoTime());
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        List<String> keys = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    keys.add(new String(r.key(), StandardCharsets.UTF_8));
                }
            }
        }
        return keys;
    }

    /**
     * How many partitions each member of the group holds, in ascending order; none while the group does
     * not exist yet (the broker's group coordinator answers GroupIdNotFoundException until the first
     * member joins).
     */
    static List<Integer> partitionsPerMember(KafkaBroker kafka, String group) throws Exception {
        try (Admin admin = Admin.create(Map.<String, Object>of("bootstrap.servers", kafka.bootstrapServers()))) {
            return admin.describeConsumerGroups(List.of(group)).all().get().get(group).members().stream()
                    .map(member -> member.assignment().topicPartitions().size()).sorted().toList();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return List.of();
            }
            throw e;
        }
    }

    static long lag(KafkaBroker kafka, String topic, String group) throws Exception {
        try (Admin admin = Admin.create(Map.<String, Object>of("bootstrap.servers", kafka.bootstrapServers()))) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int partition = 0; partition < 2; partition++) {
                latest.put(new TopicPartition(topic, partition), OffsetSpec.latest());
            }
            long lag = 0;
            for (var e : admin.listOffsets(latest).all().get().entrySet()) {
                OffsetAndMetadata c = committed.get(e.getKey());
                lag += e.getValue().offset() - (c == null ? 0 : c.offset());
            }
            return lag;
        }
    }
}
