package example.spring;

// tag::bean[]
import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

@Component
public class Inventory {

    private static final Logger log = LoggerFactory.getLogger(Inventory.class);
    private final JdbcTemplate jdbc;

    public Inventory(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @IdempotentListener(name = "deduct-stock", topic = "orders", group = "inventory",
            key = "id", keySuffix = ":deduct")   // the key: the payload's id property plus ":deduct"
    @Transactional                             // joins the transaction that writes Idem's ledger row
    public void deduct(Order order, Delivery<Order> delivery) {
        jdbc.update("update stock set quantity = quantity - ? where sku = ?", order.quantity(), order.sku());
        log.info("deducted {} (attempt {})", delivery.key().value(), delivery.attempt());
    }   // a throw rolls back the update and the ledger row; after 5 attempts: orders.DLT, then release

    @IdempotentCompensation("deduct-stock")
    public void release(DeadLetter deadLetter) {
        log.warn("order {} dead-lettered: {}", deadLetter.key().value(), deadLetter.reason());
    }
}
// end::bean[]
