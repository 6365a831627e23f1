package dev.idem.sample.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The handler's SQL on H2: the conditional update is the state guard, the order id the unique key. */
class StockTest {

    private Connection connection;

    @BeforeEach
    void database() throws SQLException {
        connection = DriverManager.getConnection("jdbc:h2:mem:stock-" + System.nanoTime(), "sa", "");
        Stock.createTables(connection, true);
        Stock.put(connection, "SKU-1", 5);
    }

    @AfterEach
    void close() throws SQLException {
        connection.close();
    }

    @Test
    void aDeductionTakesTheQuantityAndRecordsTheOrder() throws SQLException {
        Stock.deduct(connection, new Order("order-1", "SKU-1", 3));

        assertThat(Stock.available(connection, "SKU-1")).contains(2);
        assertThat(Stock.rowsPerOrder(connection, "deduction")).isEqualTo(Map.of("order-1", 1));
    }

    @Test
    void moreThanAvailableIsRejectedAndLeavesTheStockAsItWas() throws SQLException {
        assertThatThrownBy(() -> Stock.deduct(connection, new Order("order-1", "SKU-1", 6)))
                .isInstanceOf(Rejection.class).hasMessageContaining("insufficient stock of SKU-1 (5 available, 6 wanted)");

        assertThat(Stock.available(connection, "SKU-1")).contains(5);
        assertThat(Stock.count(connection, "deduction")).isZero();
    }

    @Test
    void anUnknownSkuIsRejected() {
        assertThatThrownBy(() -> Stock.deduct(connection, new Order("order-1", "SKU-404", 1)))
                .isInstanceOf(Rejection.class).hasMessageContaining("unknown SKU SKU-404");
    }

    @Test
    void aSecondDeductionOfOneOrderIsRefusedByTheUniqueOrderId() throws SQLException {
        Stock.deduct(connection, new Order("order-1", "SKU-1", 1));

        assertThatThrownBy(() -> Stock.deduct(connection, new Order("order-1", "SKU-1", 1)))
                .isInstanceOf(SQLException.class);
    }

    @Test
    void withoutTheUniqueOrderIdASecondDeductionGoesThrough() throws SQLException {
        try (Connection naive = DriverManager.getConnection("jdbc:h2:mem:naive-" + System.nanoTime(), "sa", "")) {
            Stock.createTables(naive, false);
            Stock.put(naive, "SKU-1", 5);

            Stock.deduct(naive, new Order("order-1", "SKU-1", 1));
            Stock.deduct(naive, new Order("order-1", "SKU-1", 1));

            assertThat(Stock.available(naive, "SKU-1")).contains(3);
            assertThat(Stock.rowsPerOrder(naive, "deduction")).isEqualTo(Map.of("order-1", 2));
        }
    }
}
