package dev.idem.micronaut.app;

import dev.idem.micronaut.Idempotent;
import io.micronaut.configuration.kafka.annotation.KafkaListener;
import io.micronaut.configuration.kafka.annotation.Topic;
import io.micronaut.context.annotation.Requires;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** A wrapped listener under micronaut-kafka's default error strategy: start-up must refuse it. */
@KafkaListener(groupId = "unsafe")
@Requires(property = "test.unsafe.topic")
public class UnsafeListener {

    @Topic("${test.unsafe.topic}")
    @Idempotent
    public void receive(ConsumerRecord<String, String> record) {
    }
}
