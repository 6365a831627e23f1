package dev.idem.spring.outbox;

import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.spring.IdempotentListener;
import dev.idem.spring.app.Order;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** Reserves stock and tells the next service, through the outbox, in the listener's transaction. */
@Component
public class StockListener {

    static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    private final JdbcTemplate jdbc;
    private final Outbox outbox;
    private final String table;
    private final String reserved;

    public StockListener(JdbcTemplate jdbc, Outbox outbox, @Value("${test.table}") String table,
                         @Value("${test.reserved}") String reserved) {
        this.jdbc = jdbc;
        this.outbox = outbox;
        this.table = table;
        this.reserved = reserved;
    }

    @IdempotentListener(topic = "${test.topic}", group = "${test.group}", name = "stock", key = "id")
    @Transactional
    public void onOrder(Order order) {
        int call = CALLS.computeIfAbsent(order.id(), k -> new AtomicInteger()).incrementAndGet();
        jdbc.update("insert into " + table + " (id) values (?)", order.id());
        outbox.send(OutboxMessage.to(reserved).key(order.id()).value("reserved " + order.id()));
        if (order.kind().equals("flaky") && call < 3) {
            // After the send: the row rolls back with the effect, so nothing is published for this run.
            throw new IllegalStateException("stock service refused " + order.id() + " (call " + call + ")");
        }
    }
}
