package dev.idem.kafka;

import dev.idem.redis.Guards;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.kafka.KafkaScenario.Order;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import dev.idem.redis.TestRedisson;
import org.redisson.api.RedissonClient;

/** A poll loop written by the user, with Idem deciding per record what to commit and where to seek. */
@IdemTestKit
class KafkaRecordProcessorIT {

    @Test
    void aHandWrittenPollLoopAppliesEachOrderOnce(KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres,
                                                  TestNames names) throws Exception {
        RedissonClient redisson = TestRedisson.connect(redis);
        try (KafkaScenario scenario = new KafkaScenario(kafka, redisson, postgres, names, 3, Guards.ON)) {
            scenario.produce(300, 2);
            Map<String, Object> consumerConfig = scenario.consumerConfig();
            consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);

            // Closed in reverse order: the consumer's last commit first, then Idem's renewal and producer.
            try (KafkaRecordProcessor<Order> idem = KafkaRecordProcessor.builder(consumerConfig,
                    scenario.processorBuilder()).build();
                 KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig,
                    new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(scenario.topic));
                await().atMost(Duration.ofSeconds(60)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                    PollResult result = idem.process(consumer.poll(Duration.ofMillis(200)));
                    consumer.commitSync(result.commits());
                    result.redeliveries().forEach((partition, r) -> consumer.seek(partition, r.offset()));
                    return scenario.effects() == 300 && result.outcomes().isEmpty();
                });
            }
            scenario.awaitDrained(Duration.ofSeconds(30));
            assertThat(scenario.effects()).isEqualTo(300);
        } finally {
            redisson.shutdown();
        }
    }
}
