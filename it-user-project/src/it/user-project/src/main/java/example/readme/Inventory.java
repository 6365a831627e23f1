package example.readme;

import dev.idem.core.DeadLetter;
import example.inventory.Order;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The user's own business code the README's examples call. */
final class Inventory {

    private static final Logger LOG = LoggerFactory.getLogger(Inventory.class);

    private Inventory() {
    }

    /** Writes the stock movement of an order in the caller's transaction. */
    static void deductStock(Connection tx, Order order) throws SQLException {
        try (PreparedStatement insert = tx.prepareStatement(
                "insert into stock_movement (order_id, sku, quantity) values (?, ?, ?)")) {
            insert.setString(1, order.id());
            insert.setString(2, order.sku());
            insert.setInt(3, -order.quantity());
            insert.executeUpdate();
        }
    }

    /** Undoes what the order reserved, in the caller's transaction, once its message is dead-lettered. */
    static void releaseReservation(Connection tx, DeadLetter deadLetter) throws SQLException {
        LOG.info("releasing the reservation of {} ({})", deadLetter.key().value(), deadLetter.compensationId());
        try (PreparedStatement update = tx.prepareStatement(
                "update reservation set released = true where order_key = ?")) {
            update.setString(1, deadLetter.key().value());
            update.executeUpdate();
        }
    }
}
