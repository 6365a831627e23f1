package example.spring;

// tag::wrap-rocketmq[]
import dev.idem.spring.Idempotent;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

@Component
@RocketMQMessageListener(topic = "refunds", consumerGroup = "billing")
public class Refunds implements RocketMQListener<String> {

    private final JdbcTemplate jdbc;

    public Refunds(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    @Idempotent            // the key: the message's keys; settings under idem.listeners.billing-refunds
    @Transactional
    public void onMessage(String refundId) {
        jdbc.update("insert into refunded (refund_id) values (?)", refundId);
    }
}
// end::wrap-rocketmq[]
