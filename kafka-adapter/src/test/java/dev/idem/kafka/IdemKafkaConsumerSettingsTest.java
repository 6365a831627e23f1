package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.DedupCheck;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import javax.management.ObjectName;
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

    @Test
    void aMisspelledSettingIsRefusedNamingItAndTheLikelyOne() {
        Map<String, Object> config = config();
        config.put("max.poll.record", 10);

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor()).topics("orders").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("unknown Kafka setting(s) max.poll.record (did you mean max.poll.records?)");
    }

    @Test
    void aNonNumericMaxPollIntervalIsRefusedNamingTheSettingAndValue() {
        Map<String, Object> config = config();
        config.put("max.poll.interval.ms", "abc");

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor()).topics("orders").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max.poll.interval.ms").hasMessageContaining("abc");
    }

    @Test
    void aProcessorGroupOtherThanGroupIdIsRefusedNamingBoth() {
        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config(), processor().group("billing"))
                .topics("orders").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the processor's group 'billing' differs from the consumer's group.id 'inventory'");
    }

    @Test
    void aConsumerNeverStartedClosesItsKafkaConsumerOnClose() throws Exception {
        String client = "idem-unstarted-" + UUID.randomUUID();
        Map<String, Object> config = config();
        config.put("client.id", client);
        IdemKafkaConsumer<String> consumer = IdemKafkaConsumer.builder(config, processor()).topics("orders").build();
        assertThat(registered("kafka.consumer", client)).isTrue();

        consumer.close();

        assertThat(registered("kafka.consumer", client)).as("Kafka consumer still open").isFalse();
        assertThat(registered("kafka.producer", client)).as("dead-letter producer still open").isFalse();
    }

    @Test
    void aKafkaConsumerThatCannotBeConstructedLeavesNoDeadLetterProducerOpen() throws Exception {
        String client = "idem-failing-" + UUID.randomUUID();
        Map<String, Object> config = config();
        config.put("client.id", client);
        // Parsed fine, refused by the KafkaConsumer constructor: not a partition assignor.
        config.put("partition.assignment.strategy", String.class.getName());

        assertThatThrownBy(() -> IdemKafkaConsumer.builder(config, processor()).topics("orders").build())
                .hasMessageContaining("kafka consumer");
        assertThat(registered("kafka.producer", client)).as("dead-letter producer leaked").isFalse();
        assertThat(registered("kafka.admin.client", client)).as("dead-letter admin client leaked").isFalse();
    }

    @Test
    void aConsumerInterceptorIsNotGivenToTheDeadLetterProducer() {
        Map<String, Object> config = config();
        config.put("interceptor.classes", NoOpConsumerInterceptor.class.getName());

        IdemKafkaConsumer.builder(config, processor()).topics("orders").build().close();
    }

    @Test
    void aClosedConsumerStartedAgainSaysItIsClosed() {
        IdemKafkaConsumer<String> consumer = IdemKafkaConsumer.builder(config(), processor()).topics("orders").build();
        consumer.start();
        consumer.close();

        assertThatThrownBy(consumer::start).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    private static boolean registered(String domain, String clientId) throws Exception {
        return !ManagementFactory.getPlatformMBeanServer()
                .queryNames(new ObjectName(domain + ":type=app-info,id=" + ObjectName.quote(clientId)), null).isEmpty()
                || !ManagementFactory.getPlatformMBeanServer()
                .queryNames(new ObjectName(domain + ":type=app-info,id=" + clientId), null).isEmpty();
    }
}
