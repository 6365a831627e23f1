package dev.idem.spring.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;

/**
 * The connection part of Spring Boot's {@code spring.kafka.*}: one place for servers, security, SSL
 * and SASL, whether a listener is Idem's own or a wrapped {@code @KafkaListener}. Touched only when
 * spring-boot-kafka is on the class path.
 */
final class SpringKafkaSettings {

    static final String PROPERTIES = "org.springframework.boot.kafka.autoconfigure.KafkaProperties";

    /** What is each consumer's own, or Idem's: deserializers (Idem reads bytes), group, commits, client id. */
    private static final Set<String> NOT_SHARED = Set.of(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ConsumerConfig.GROUP_ID_CONFIG,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG,
            ConsumerConfig.CLIENT_ID_CONFIG);

    private SpringKafkaSettings() {
    }

    /** The Kafka client keys of {@code spring.kafka.*} (consumer side), empty without a {@code KafkaProperties} bean. */
    static Map<String, Object> connection(ListableBeanFactory beans) {
        KafkaProperties kafka = beans.getBeanProvider(KafkaProperties.class).getIfAvailable();
        if (kafka == null) {
            return Map.of();
        }
        Map<String, Object> settings = new HashMap<>();
        kafka.buildConsumerProperties().forEach((key, value) -> {
            boolean kafkaKey = ConsumerConfig.configNames().contains(key) || ProducerConfig.configNames().contains(key)
                    || AdminClientConfig.configNames().contains(key);
            if (kafkaKey && !NOT_SHARED.contains(key) && value != null) {
                settings.put(key, value instanceof Iterable<?> list ? String.join(",", strings(list)) : value);
            }
        });
        return settings;
    }

    private static Iterable<String> strings(Iterable<?> list) {
        java.util.List<String> out = new java.util.ArrayList<>();
        list.forEach(item -> out.add(String.valueOf(item)));
        return out;
    }
}
