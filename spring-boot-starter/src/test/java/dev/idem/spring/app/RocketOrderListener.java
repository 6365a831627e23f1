package dev.idem.spring.app;

import dev.idem.core.DeadLetter;
import dev.idem.spring.Broker;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The same order listener on RocketMQ, in the contexts that name a RocketMQ topic. */
@Component
@ConditionalOnProperty("test.rocketmq.topic")
public class RocketOrderListener {

    private final JdbcTemplate jdbc;
    private final String table;

    public RocketOrderListener(JdbcTemplate jdbc, @Value("${test.table}") String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @IdempotentListener(topic = "${test.rocketmq.topic}", group = "${test.rocketmq.group}", name = "rocket-orders",
            key = "id", broker = Broker.ROCKETMQ)
    @Transactional
    public void onOrder(Order order) {
        int call = Effects.called("rocket:" + order.id());
        jdbc.update("insert into " + table + " (id) values (?)", "rocket:" + order.id());
        if (order.kind().equals("poison")) {
            throw new IllegalStateException("stock service refused " + order.id() + " (call " + call + ")");
        }
    }

    @IdempotentCompensation("rocket-orders")
    public void compensate(DeadLetter deadLetter) {
        Effects.compensated("rocket:" + deadLetter.key().value());
    }
}
