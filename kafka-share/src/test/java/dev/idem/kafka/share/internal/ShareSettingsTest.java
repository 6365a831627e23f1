package dev.idem.kafka.share.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShareSettingsTest {

    private static Map<String, Object> config(Object... pairs) {
        Map<String, Object> config = new HashMap<>(Map.of("bootstrap.servers", "localhost:9092", "group.id", "g"));
        for (int i = 0; i < pairs.length; i += 2) {
            config.put((String) pairs[i], pairs[i + 1]);
        }
        return config;
    }

    @Test
    void theAcknowledgementModeIsExplicitAndOnlyConsumerKeysReachTheConsumer() {
        ShareSettings settings = ShareSettings.of(config("acks", "all", "max.poll.records", 50));

        assertThat(settings.group()).isEqualTo("g");
        assertThat(settings.consumer()).containsEntry(ShareSettings.ACKNOWLEDGEMENT_MODE, "explicit")
                .containsEntry("max.poll.records", 50).doesNotContainKey("acks");
    }

    @Test
    void anImplicitAcknowledgementModeIsRefusedByName() {
        assertThatThrownBy(() -> ShareSettings.of(config("share.acknowledgement.mode", "implicit")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("share.acknowledgement.mode must be unset or explicit but was implicit");
    }

    @Test
    void aMisspeltKeyOrAMissingGroupIsRefusedByName() {
        assertThatThrownBy(() -> ShareSettings.of(config("max.poll.record", 5)))
                .hasMessageStartingWith("unknown Kafka setting(s) max.poll.record");
        Map<String, Object> noGroup = config();
        noGroup.remove("group.id");
        assertThatThrownBy(() -> ShareSettings.of(noGroup)).hasMessage("group.id is required in the share consumer settings");
    }

    @Test
    void aValueDeserializerOtherThanBytesIsRefused() {
        assertThatThrownBy(() -> ShareSettings.of(config("value.deserializer",
                "org.apache.kafka.common.serialization.StringDeserializer")))
                .hasMessageStartingWith("value.deserializer must be unset or ByteArrayDeserializer");
    }

    @Test
    void aDeliveryLimitMustLeaveRoomForACrashLoopAndItsDeadLetter() {
        DeliveryLimit.check(7, 5, "g");
        DeliveryLimit.check(10, 8, "g");
        assertThatThrownBy(() -> DeliveryLimit.check(6, 5, "g")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("share.delivery.count.limit of share group 'g' is 6 but must be >= "
                        + "maxAttempts + 2 = 7");
    }
}
