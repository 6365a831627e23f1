package dev.idem.kafka.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;

/**
 * Validated Kafka consumer settings for an Idem consumer: every check names the setting and its
 * value, before anything connects (decision 0011). Immutable.
 *
 * @param consumer        the settings handed to the {@code KafkaConsumer}: consumer keys only, byte
 *                        array deserializers, no auto-commit
 * @param group           {@code group.id}
 * @param maxPollInterval {@code max.poll.interval.ms} as Kafka parsed it
 */
public record ConsumerSettings(Map<String, Object> consumer, String group, Duration maxPollInterval) {

    /** @throws NullPointerException if a part is null */
    public ConsumerSettings {
        consumer = Map.copyOf(consumer);
        java.util.Objects.requireNonNull(group, "group");
        java.util.Objects.requireNonNull(maxPollInterval, "maxPollInterval");
    }

    /**
     * Checks user settings: {@code bootstrap.servers} and {@code group.id} present, no auto-commit,
     * byte array deserializers only, every key known to Kafka (producer and admin keys are allowed:
     * the dead-letter producer uses them), every value parsed as Kafka will parse it.
     *
     * @throws IllegalArgumentException naming the setting that is missing, unknown or wrong
     */
    public static ConsumerSettings of(Map<String, Object> config) {
        checkCommon(config, Set.of(), "consumer settings");
        Object autoCommit = config.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
        if (autoCommit != null && Boolean.parseBoolean(autoCommit.toString())) {
            throw new IllegalArgumentException("enable.auto.commit must be false but was " + autoCommit
                    + ": Idem commits only offsets of finished records");
        }
        Map<String, Object> consumer = new HashMap<>(config);
        consumer.keySet().retainAll(ConsumerConfig.configNames());
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        Map<String, Object> parsed;
        try {
            // Kafka's own parser, without the KafkaConsumer: a bad value fails here, naming the key.
            parsed = ConsumerConfig.configDef().parse(consumer);
        } catch (ConfigException e) {
            throw new IllegalArgumentException("consumer settings: " + e.getMessage(), e);
        }
        consumer.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        consumer.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        // ConsumerConfig parsed both: the group is required above, the interval has a default.
        Number maxPollInterval = (Number) Objects.requireNonNull(parsed.get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG));
        return new ConsumerSettings(consumer, String.valueOf(config.get(ConsumerConfig.GROUP_ID_CONFIG)),
                Duration.ofMillis(maxPollInterval.longValue()));
    }

    /**
     * The checks every Idem Kafka consumer's settings pass: {@code bootstrap.servers} and
     * {@code group.id} present, every key known to Kafka (consumer, producer and admin keys, and
     * {@code extraKnown}), byte array deserializers only.
     *
     * @param what the settings' name in messages, e.g. "consumer settings"
     * @throws IllegalArgumentException naming the setting that is missing, unknown or wrong
     */
    public static void checkCommon(Map<String, Object> config, Set<String> extraKnown, String what) {
        require(config, ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, what);
        require(config, ConsumerConfig.GROUP_ID_CONFIG, what);
        refuseUnknown(config, extraKnown, what);
        for (String deserializer : List.of(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG)) {
            Object value = config.get(deserializer);
            if (value != null && !value.toString().contains(ByteArrayDeserializer.class.getSimpleName())) {
                throw new IllegalArgumentException(deserializer + " must be unset or ByteArrayDeserializer but was "
                        + value + ": Idem reads bytes and decodes them with the processor's codec");
            }
        }
    }

    private static void require(Map<String, Object> config, String name, String what) {
        Object value = config.get(name);
        if (value == null || value.toString().isBlank()) {
            throw new IllegalArgumentException(name + " is required in the " + what);
        }
    }

    /*
     * Kafka drops unknown keys with a warning that is easy to miss ("supplied but are not used yet"),
     * and Idem used to drop them silently: a typo such as max.poll.record changed nothing. Refusing
     * them at build time is the one place the typo is seen.
     */
    private static void refuseUnknown(Map<String, Object> config, Set<String> extraKnown, String what) {
        Set<String> known = new TreeSet<>(ConsumerConfig.configNames());
        known.addAll(extraKnown);
        known.addAll(ProducerConfig.configNames());
        known.addAll(AdminClientConfig.configNames());
        List<String> unknown = new ArrayList<>();
        for (String key : new TreeSet<>(config.keySet())) {
            if (!known.contains(key)) {
                String near = nearest(key, ConsumerConfig.configNames());
                unknown.add(near == null ? key : key + " (did you mean " + near + "?)");
            }
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown Kafka setting(s) " + String.join(", ", unknown)
                    + ": the " + what + " take Kafka consumer keys (and producer keys for the dead-letter producer)");
        }
    }

    private static @Nullable String nearest(String key, Set<String> names) {
        String best = null;
        int bestDistance = 3; // a typo, not a different setting
        for (String name : names) {
            int distance = distance(key, name);
            if (distance <= bestDistance) {
                best = name;
                bestDistance = distance;
            }
        }
        return best;
    }

    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
