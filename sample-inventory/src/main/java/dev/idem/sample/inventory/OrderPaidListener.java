package dev.idem.sample.inventory;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.micronaut.IdempotentCompensation;
import dev.idem.micronaut.IdempotentListener;
import io.micronaut.context.annotation.Requires;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.sql.SQLException;

/**
 * {@code order-paid} from Kafka, through Idem: one deduction per order id, in one transaction with
 * Idem's ledger row. A rejection goes straight to {@code order-paid.DLT}; a failure is retried
 * (five attempts, then the dead letter); a dead-lettered order is refunded once.
 */
@Singleton
@Requires(property = Guards.PROPERTY, notEquals = Guards.OFF)
public class OrderPaidListener {

    /** The listener's name, in {@code idem.listeners.<name>.*} and the meters' {@code listener} tag. */
    public static final String NAME = "order-paid-kafka";

    private final Deductions deductions;
    private final Refunds refunds;

    OrderPaidListener(Deductions deductions, Refunds refunds) {
        this.deductions = deductions;
        this.refunds = refunds;
    }

    @IdempotentListener(name = NAME, topic = "${inventory.topic:order-paid}", group = "${inventory.group:inventory}",
            key = "orderId", keySuffix = ":deduct",
            lease = "5s",       // longer than the slowest deduction; short, so a crashed instance's claims move on soon
            concurrency = 2)    // partitions in parallel
    @Transactional   // joins the transaction in which Idem writes the ledger row
    public void deduct(Order order, Delivery<Order> delivery) throws SQLException {
        deductions.deduct(order, delivery.attempt());
    }

    @IdempotentCompensation(NAME)
    public void refund(DeadLetter deadLetter) {
        refunds.refund(refunds.order(deadLetter.envelope().body()), Refunds.why(deadLetter), true);
    }
}
