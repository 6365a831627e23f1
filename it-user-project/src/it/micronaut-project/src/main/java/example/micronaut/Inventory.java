package example.micronaut;

// tag::bean[]
import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.micronaut.IdempotentCompensation;
import dev.idem.micronaut.IdempotentListener;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

@Singleton
public class Inventory {

    private static final Logger log = LoggerFactory.getLogger(Inventory.class);
    private final DataSource dataSource;     // Micronaut's: inside a transaction, the transaction's connection

    public Inventory(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @IdempotentListener(name = "deduct-stock", topic = "orders", group = "inventory",
            key = "id", keySuffix = ":deduct")   // the key: the payload's id property plus ":deduct"
    @Transactional                             // joins the transaction that writes Idem's ledger row
    public void deduct(Order order, Delivery<Order> delivery) throws SQLException {
        Connection connection = dataSource.getConnection();
        try (PreparedStatement update = connection.prepareStatement(
                "update stock set quantity = quantity - ? where sku = ?")) {
            update.setInt(1, order.quantity());
            update.setString(2, order.sku());
            update.executeUpdate();
        }
        log.info("deducted {} (attempt {})", delivery.key().value(), delivery.attempt());
    }   // a throw rolls back the update and the ledger row; after 5 attempts: orders.DLT, then release

    @IdempotentCompensation("deduct-stock")
    public void release(DeadLetter deadLetter) {
        log.warn("order {} dead-lettered: {}", deadLetter.key().value(), deadLetter.reason());
    }
}
// end::bean[]
