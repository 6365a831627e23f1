package example.micronaut;

// tag::outbox[]
import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.micronaut.IdempotentListener;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

@Singleton
public class Reservations {

    private final DataSource dataSource;
    private final Outbox outbox;     // idem.outbox.enabled: true; sends on Micronaut's current transaction

    public Reservations(DataSource dataSource, Outbox outbox) {
        this.dataSource = dataSource;
        this.outbox = outbox;
    }

    @IdempotentListener(name = "reserve-stock", topic = "orders", group = "reservations", key = "id")
    @Transactional
    public void reserve(Order order) throws SQLException {
        try (PreparedStatement insert = dataSource.getConnection().prepareStatement(
                "insert into reservation (order_id, sku) values (?, ?)")) {
            insert.setString(1, order.id());
            insert.setString(2, order.sku());
            insert.executeUpdate();
        }
        outbox.send(OutboxMessage.to("stock-reserved")    // a row in this transaction: published
                .key(order.sku())                         // after it commits, never if it rolls back
                .value("{\"order\":\"" + order.id() + "\"}"));
    }
}
// end::outbox[]
