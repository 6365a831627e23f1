package dev.idem.spring.app;

import dev.idem.spring.IdempotentListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The order listener's unguarded twin: Redis-only mode ({@code ledger = false}), no business check. */
@Component
@ConditionalOnProperty("test.unguarded.topic")
public class UnguardedOrderListener {

    private final JdbcTemplate jdbc;
    private final String table;

    public UnguardedOrderListener(JdbcTemplate jdbc, @Value("${test.table}") String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @IdempotentListener(topic = "${test.unguarded.topic}", group = "${test.group}", name = "unguarded", key = "id",
            ledger = false)
    @Transactional
    public void onOrder(Order order) {
        Effects.called("unguarded:" + order.id());
        jdbc.update("insert into " + table + " (id) values (?)", "unguarded:" + order.id());
    }
}
