package dev.idem.sample.inventory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The service's SQL, on a connection the caller's transaction owns: the tables, the deduction (the
 * conditional update is the state guard: stock never goes below zero) and the counts behind
 * {@code /stats}. Stateless and thread-safe. PostgreSQL and H2 alike.
 */
public final class Stock {

    private Stock() {
    }

    /**
     * Creates the service's tables when missing. {@code unique} is false only for the demo's
     * guards-off run: without it, the deduction and refund tables accept a second row per order.
     */
    public static void createTables(Connection connection, boolean unique) throws SQLException {
        String key = unique ? " primary key" : "";
        try (Statement s = connection.createStatement()) {
            s.execute("create table if not exists stock (sku varchar(64) primary key, available int not null)");
            s.execute("create table if not exists deduction (order_id varchar(64) not null" + key
                    + ", sku varchar(64) not null, quantity int not null,"
                    + " applied_at timestamp default current_timestamp not null)");
            s.execute("create table if not exists refund (order_id varchar(64) not null" + key
                    + ", sku varchar(64) not null, quantity int not null, reason varchar(500) not null,"
                    + " refunded_at timestamp default current_timestamp not null)");
        }
    }

    /**
     * Deducts the order's quantity and records the deduction, in the caller's transaction.
     *
     * @throws Rejection when the SKU is unknown or has less than the quantity available
     */
    public static void deduct(Connection connection, Order order) throws SQLException {
        if (order.quantity() < 1) {
            throw new Rejection("order " + order.orderId() + ": quantity must be >= 1 but was " + order.quantity());
        }
        try (PreparedStatement update = connection.prepareStatement(
                "update stock set available = available - ? where sku = ? and available >= ?")) {
            update.setInt(1, order.quantity());
            update.setString(2, order.sku());
            update.setInt(3, order.quantity());
            if (update.executeUpdate() == 0) {
                Optional<Integer> available = available(connection, order.sku());
                throw new Rejection(available.isEmpty()
                        ? "order " + order.orderId() + ": unknown SKU " + order.sku()
                        : "order " + order.orderId() + ": insufficient stock of " + order.sku() + " ("
                                + available.get() + " available, " + order.quantity() + " wanted)");
            }
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "insert into deduction (order_id, sku, quantity) values (?, ?, ?)")) {
            insert.setString(1, order.orderId());
            insert.setString(2, order.sku());
            insert.setInt(3, order.quantity());
            insert.executeUpdate();
        }
    }

    /** Records a refund of the order. */
    public static void recordRefund(Connection connection, Order order, String reason) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "insert into refund (order_id, sku, quantity, reason) values (?, ?, ?, ?)")) {
            insert.setString(1, order.orderId());
            insert.setString(2, order.sku());
            insert.setInt(3, order.quantity());
            insert.setString(4, reason.length() > 500 ? reason.substring(0, 500) : reason);
            insert.executeUpdate();
        }
    }

    /** Whether the order has a refund row. */
    public static boolean refunded(Connection connection, String orderId) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("select 1 from refund where order_id = ?")) {
            select.setString(1, orderId);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Sets a SKU's stock (seeding). */
    public static void put(Connection connection, String sku, int available) throws SQLException {
        try (PreparedStatement delete = connection.prepareStatement("delete from stock where sku = ?");
             PreparedStatement insert = connection.prepareStatement("insert into stock (sku, available) values (?, ?)")) {
            delete.setString(1, sku);
            delete.executeUpdate();
            insert.setString(1, sku);
            insert.setInt(2, available);
            insert.executeUpdate();
        }
    }

    /** A SKU's available stock, empty when the SKU is unknown. */
    public static Optional<Integer> available(Connection connection, String sku) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("select available from stock where sku = ?")) {
            select.setString(1, sku);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next() ? Optional.of(rs.getInt(1)) : Optional.empty();
            }
        }
    }

    /** Every SKU's available stock, by SKU. */
    public static Map<String, Integer> all(Connection connection) throws SQLException {
        Map<String, Integer> stock = new LinkedHashMap<>();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("select sku, available from stock order by sku")) {
            while (rs.next()) {
                stock.put(rs.getString(1), rs.getInt(2));
            }
        }
        return stock;
    }

    /** Rows per order id in {@code deduction} or {@code refund}: more than 1 is a doubled effect. */
    public static Map<String, Integer> rowsPerOrder(Connection connection, String table) throws SQLException {
        if (!table.equals("deduction") && !table.equals("refund")) {
            throw new IllegalArgumentException("table must be deduction or refund but was " + table);
        }
        Map<String, Integer> rows = new LinkedHashMap<>();
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("select order_id, count(*) from " + table + " group by order_id")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2));
            }
        }
        return rows;
    }

    /** Rows in {@code deduction} or {@code refund}. */
    public static long count(Connection connection, String table) throws SQLException {
        if (!table.equals("deduction") && !table.equals("refund")) {
            throw new IllegalArgumentException("table must be deduction or refund but was " + table);
        }
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("select count(*) from " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
