package dev.idem.spring.wrapped;

import dev.idem.spring.Idempotent;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.KafkaListenerErrorHandler;
import org.springframework.stereotype.Component;

/** A listener whose @KafkaListener error handler swallows its failures: Idem refuses to wrap it. */
@Component
@ConditionalOnProperty("test.swallowing-listener")
public class SwallowingListener {

    @KafkaListener(id = "swallowing", topics = "never-consumed", groupId = "never-joined", errorHandler = "swallow")
    @Idempotent
    public void onRecord(ConsumerRecord<String, String> record) {
        throw new IllegalStateException("never called");
    }

    /** Logs and carries on, as such handlers do. */
    @Component("swallow")
    @ConditionalOnProperty("test.swallowing-listener")
    public static class Swallow implements KafkaListenerErrorHandler {
        @Override
        public Object handleError(org.springframework.messaging.Message<?> message,
                                  org.springframework.kafka.listener.ListenerExecutionFailedException exception) {
            return null;
        }
    }
}
