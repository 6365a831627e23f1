package example.spring;

// tag::outbox[]
import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.spring.IdempotentListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

@Component
public class Reservations {

    private final JdbcTemplate jdbc;
    private final Outbox outbox;     // idem.outbox.enabled: true; sends on Spring's current transaction

    public Reservations(JdbcTemplate jdbc, Outbox outbox) {
        this.jdbc = jdbc;
        this.outbox = outbox;
    }

    @IdempotentListener(name = "reserve-stock", topic = "orders", group = "reservations", key = "id")
    @Transactional
    public void reserve(Order order) {
        jdbc.update("insert into reservation (order_id, sku) values (?, ?)", order.id(), order.sku());
        outbox.send(OutboxMessage.to("stock-reserved")    // a row in this transaction: published
                .key(order.sku())                         // after it commits, never if it rolls back
                .value("{\"order\":\"" + order.id() + "\"}"));
    }
}
// end::outbox[]
