package dev.idem.sample.inventory;

import jakarta.inject.Singleton;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The handler's work, shared by the Kafka and RocketMQ listeners: deduct on the transaction's
 * connection, then the demo's injected transient failure (if any). Thread-safe.
 */
@Singleton
final class Deductions {

    private final DataSource dataSource;
    private final Faults faults;

    Deductions(DataSource dataSource, Faults faults) {
        this.dataSource = dataSource;
        this.faults = faults;
    }

    /** Runs inside the caller's transaction: Micronaut's DataSource hands out its connection (not to close). */
    void deduct(Order order, int attempt) throws SQLException {
        Stock.deduct(dataSource.getConnection(), order);
        faults.afterDeduction(order, attempt);
    }
}
