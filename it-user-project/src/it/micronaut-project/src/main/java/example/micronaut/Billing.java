package example.micronaut;

// tag::wrap[]
import dev.idem.micronaut.Idempotent;
import dev.idem.micronaut.KeyFrom;
import io.micronaut.configuration.kafka.annotation.ErrorStrategy;
import io.micronaut.configuration.kafka.annotation.ErrorStrategyValue;
import io.micronaut.configuration.kafka.annotation.KafkaListener;
import io.micronaut.configuration.kafka.annotation.OffsetReset;
import io.micronaut.configuration.kafka.annotation.Topic;
import org.apache.kafka.clients.consumer.ConsumerRecord;

@KafkaListener(groupId = "billing", offsetReset = OffsetReset.EARLIEST,
        errorStrategy = @ErrorStrategy(value = ErrorStrategyValue.RETRY_ON_ERROR,
                retryCount = Integer.MAX_VALUE, retryDelay = "1s"))   // required: Idem decides
public class Billing {

    @Topic("payments")
    @Idempotent(keySource = KeyFrom.MESSAGE_KEY, maxAttempts = 5)   // the only line added
    public void charge(ConsumerRecord<String, String> record) {     // declares the record
        // ... charge once per message key; a throw is retried by Idem, then payments.DLT
    }
}
// end::wrap[]
