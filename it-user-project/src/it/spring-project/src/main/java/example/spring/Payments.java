package example.spring;

// tag::wrap[]
import dev.idem.spring.Idempotent;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

@Component
public class Payments {

    private final JdbcTemplate jdbc;

    public Payments(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @KafkaListener(id = "capture-payments", topics = "payments", groupId = "billing", concurrency = "2")
    @Idempotent            // the key: the record key; settings under idem.listeners.capture-payments
    @Transactional
    public void capture(ConsumerRecord<String, String> payment) {
        jdbc.update("insert into captured (payment_id, body) values (?, ?)", payment.key(), payment.value());
    }
}
// end::wrap[]
