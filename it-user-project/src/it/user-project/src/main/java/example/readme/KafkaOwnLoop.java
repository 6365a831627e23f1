package example.readme;

// tag::loop[]
import dev.idem.kafka.KafkaRecordProcessor;
import dev.idem.kafka.PollResult;
// end::loop[]
import dev.idem.core.IdempotentProcessor;
import example.inventory.Order;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/** README and docs/guide/kafka.md, "Kafka in a few lines": keeping your own poll loop. */
final class KafkaOwnLoop {

    private volatile boolean running = true;

    void run(Map<String, Object> kafka, IdempotentProcessor.Builder<Order> processorBuilder,
             KafkaConsumer<byte[], byte[]> consumer) {
        // tag::loop[]
        KafkaRecordProcessor<Order> idem = KafkaRecordProcessor.builder(kafka, processorBuilder).build();
        while (running) {
            PollResult result = idem.process(consumer.poll(Duration.ofMillis(500)));
            consumer.commitSync(result.commits());
            result.redeliveries().forEach((partition, r) -> consumer.seek(partition, r.offset()));  // pause for r.delay()
        }
        consumer.close();            // your last commit first
        idem.close();                // then lease renewal and the dead-letter producer
        // end::loop[]
    }
}
