package dev.idem.spring.wrapped;

import dev.idem.spring.Idempotent;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * An existing rocketmq-spring listener, as a Spring user has it, with Idem put around it by
 * {@code @Idempotent}: the body is the order id; {@code order-poison} always fails.
 */
@Component
@ConditionalOnProperty("test.rocketmq.topic")
@RocketMQMessageListener(topic = "${test.rocketmq.topic}", consumerGroup = "${test.rocketmq.group}")
public class WrappedRocketOrders implements RocketMQListener<String> {

    private final JdbcTemplate jdbc;
    private final String table;

    public WrappedRocketOrders(JdbcTemplate jdbc, @Value("${test.table}") String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @Override
    @Idempotent(name = "wrapped-rocket")
    @Transactional
    public void onMessage(String id) {
        WrappedOrders.count("rocket:" + id);
        jdbc.update("insert into " + table + " (id) values (?)", "rocket:" + id);
        if (id.equals("order-poison")) {
            throw new IllegalStateException("stock service refused " + id);
        }
    }
}
