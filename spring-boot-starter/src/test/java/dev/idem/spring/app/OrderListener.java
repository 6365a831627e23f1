package dev.idem.spring.app;

import dev.idem.core.DeadLetter;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** Records each order's effect with JdbcTemplate in a @Transactional method, as a Spring user writes it. */
@Component
public class OrderListener {

    private final JdbcTemplate jdbc;
    private final String table;
    private final String ledger;
    private final String group;

    public OrderListener(JdbcTemplate jdbc, @Value("${test.table}") String table,
                         @Value("${idem.ledger.table}") String ledger, @Value("${test.group}") String group) {
        this.jdbc = jdbc;
        this.table = table;
        this.ledger = ledger;
        this.group = group;
    }

    @IdempotentListener(topic = "${test.topic}", group = "${test.group}", name = "orders", key = "id")
    @Transactional
    public void onOrder(Order order) {
        int call = Effects.called(order.id());
        // The ledger row is not committed yet: only a statement in its own transaction can see it.
        Integer rows = jdbc.queryForObject("select count(*) from " + ledger
                + " where consumer_group = ? and idempotency_key = ?", Integer.class, group, order.id());
        Effects.sawLedgerRow(order.id(), rows != null && rows == 1);
        jdbc.update("insert into " + table + " (id) values (?)", order.id());
        if (order.kind().equals("poison") || (order.kind().equals("flaky") && call < 3)) {
            // After the insert: the transaction rolls back the effect with the ledger row.
            throw new IllegalStateException("stock service refused " + order.id() + " (call " + call + ")");
        }
    }

    @IdempotentCompensation("orders")
    public void compensate(DeadLetter deadLetter) {
        Effects.compensated(deadLetter.key().value());
    }
}
