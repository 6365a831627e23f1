package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.DedupCheck;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Wrong settings fail at build time, naming the setting, before anything connects. */
class IdemKafkaConsumerSettingsTest {

    private static IdempotentProcessor.Builder<String> processor() {
        return IdempotentProcessor.<String>builder(d -> { }).claims(InMemoryClaimStore.create())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.utf8()).keys(KeySource.messageId());
    }

    private static Map<String, Object> config() {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", "127.0.0.1:1");
        config.put("group.id", "inventory");
        return config;
    }

    @Test
    void aMissingGroupIdIsNamed() {
        Map<String, Object> config = config();
        config.remove("group.id");

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor()).topics("orders").build())
                .hasMessage("group.id is required in the consumer settings");
    }

    @Test
    void autoCommitIsRefused() {
        Map<String, Object> config = config();
        config.put("enable.auto.commit", "true");

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor()).topics("orders").build())
                .hasMessageStartingWith("enable.auto.commit must be false");
    }

    @Test
    void aLeaseNotShorterThanMaxPollIntervalIsRefused() {
        Map<String, Object> config = config();
        config.put("max.poll.interval.ms", "20000");

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor().lease(Duration.ofSeconds(30)))
                .topics("orders").build())
                .hasMessageStartingWith("lease (PT30S) must be shorter than max.poll.interval.ms (20000 ms)");
    }

    @Test
    void noTopicIsRefused() {
        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config(), processor()).build())
                .hasMessageStartingWith("topics must name at least one topic");
    }

    @Test
    void aForeignDeserializerIsRefused() {
        Map<String, Object> config = config();
        config.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor()).topics("orders").build())
                .hasMessageStartingWith("value.deserializer must be unset or ByteArrayDeserializer");
    }
}
