package dev.idem.kafka.internal;

import java.time.Duration;
import org.apache.kafka.clients.consumer.Consumer;

/** Calls that must work on every supported {@code kafka-clients} line (3.9 and 4.x). */
public final class KafkaClients {

    private KafkaClients() {
    }

    /**
     * Closes a consumer within {@code timeout}. {@code close(Duration)} exists in 3.9 and 4.x;
     * {@code CloseOptions}, which 4.1 prefers, does not exist in 3.9.
     */
    @SuppressWarnings("deprecation")
    public static void close(Consumer<?, ?> consumer, Duration timeout) {
        consumer.close(timeout);
    }
}
