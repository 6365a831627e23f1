package dev.idem.sample.inventory;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.micronaut.Broker;
import dev.idem.micronaut.IdempotentCompensation;
import dev.idem.micronaut.IdempotentListener;
import io.micronaut.context.annotation.Requires;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.sql.SQLException;

/**
 * The same handler for {@code order-paid} on RocketMQ, present when {@code idem.rocketmq.name-server}
 * is set (e.g. with {@code ROCKETMQ_NAMESRV}). Same group and topic names as on Kafka, so Idem's keys and ledger rows are the same: an
 * order that arrives on both brokers is still deducted once. Dead letters go to {@code order-paid_DLQ}.
 */
@Singleton
@Requires(property = Guards.PROPERTY, notEquals = Guards.OFF)
@Requires(property = "idem.rocketmq.name-server", pattern = ".+")
public class RocketMqOrderPaidListener {

    /** The listener's name. */
    public static final String NAME = "order-paid-rocketmq";

    private final Deductions deductions;
    private final Refunds refunds;

    RocketMqOrderPaidListener(Deductions deductions, Refunds refunds) {
        this.deductions = deductions;
        this.refunds = refunds;
    }

    @IdempotentListener(name = NAME, broker = Broker.ROCKETMQ, topic = "${inventory.topic:order-paid}",
            group = "${inventory.group:inventory}", key = "orderId", keySuffix = ":deduct", lease = "5s")
    @Transactional
    public void deduct(Order order, Delivery<Order> delivery) throws SQLException {
        deductions.deduct(order, delivery.attempt());
    }

    @IdempotentCompensation(NAME)
    public void refund(DeadLetter deadLetter) {
        refunds.refund(refunds.order(deadLetter.envelope().body()), Refunds.why(deadLetter), true);
    }
}
