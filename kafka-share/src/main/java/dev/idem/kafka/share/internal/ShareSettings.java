package dev.idem.kafka.share.internal;

import dev.idem.kafka.internal.ConsumerSettings;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;

/**
 * Validated settings of an Idem share consumer: every check names the setting and its value, before
 * anything connects. Immutable.
 *
 * @param consumer the settings handed to the {@code KafkaShareConsumer}: consumer keys only, explicit
 *                 acknowledgement, byte array deserializers
 * @param group    {@code group.id}, the share group
 */
public record ShareSettings(Map<String, Object> consumer, String group) {

    /** The share consumer's acknowledgement mode setting: Idem acknowledges each record itself. */
    public static final String ACKNOWLEDGEMENT_MODE = "share.acknowledgement.mode";

    /** @throws NullPointerException if a part is null */
    public ShareSettings {
        consumer = Map.copyOf(consumer);
        Objects.requireNonNull(group, "group");
    }

    /**
     * Checks user settings: {@code bootstrap.servers} and {@code group.id} present, acknowledgement
     * unset or explicit, byte array deserializers only, every key known to Kafka (producer and admin
     * keys are allowed: the dead-letter producer and the start-up check use them). Keys that share
     * groups do not have ({@code auto.offset.reset}, {@code enable.auto.commit}, ...) are refused by
     * Kafka itself when the consumer is built, by name.
     *
     * @throws IllegalArgumentException naming the setting that is missing, unknown or wrong
     */
    public static ShareSettings of(Map<String, Object> config) {
        ConsumerSettings.checkCommon(config, Set.of(ACKNOWLEDGEMENT_MODE), "share consumer settings");
        Object mode = config.get(ACKNOWLEDGEMENT_MODE);
        if (mode != null && !"explicit".equalsIgnoreCase(mode.toString())) {
            throw new IllegalArgumentException(ACKNOWLEDGEMENT_MODE + " must be unset or explicit but was " + mode
                    + ": Idem accepts, releases or renews each record by its outcome");
        }
        Map<String, Object> consumer = new HashMap<>(config);
        consumer.keySet().retainAll(ConsumerConfig.configNames());
        consumer.put(ACKNOWLEDGEMENT_MODE, "explicit");
        consumer.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        consumer.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        return new ShareSettings(consumer, String.valueOf(config.get(ConsumerConfig.GROUP_ID_CONFIG)));
    }
}
