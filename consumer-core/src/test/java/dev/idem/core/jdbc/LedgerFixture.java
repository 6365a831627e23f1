package dev.idem.core.jdbc;

import dev.idem.core.Delivery;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotencyKey;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import java.util.logging.Logger;
import javax.sql.DataSource;

/** Test helpers for the ledger: a DataSource over DriverManager, and deliveries. */
public final class LedgerFixture {

    private LedgerFixture() {
    }

    /** A DataSource that opens a new connection per call (no pool: tests only). */
    public static DataSource dataSource(String url, String user, String password) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getConnection" -> DriverManager.getConnection(url, user, password);
                    case "getLogWriter" -> (PrintWriter) null;
                    case "getParentLogger" -> Logger.getGlobal();
                    case "getLoginTimeout" -> 0;
                    case "isWrapperFor" -> false;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "DataSource[" + url + "]";
                    default -> throw new SQLException("not supported in tests: " + method.getName());
                });
    }

    /** A DataSource that lends {@code connection} and leaves it open when the borrower closes it. */
    public static DataSource borrowed(Connection connection) {
        Connection unclosable = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getConnection" -> unclosable;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "DataSource[" + connection + "]";
                    default -> throw new SQLException("not supported in tests: " + method.getName());
                });
    }

    /** A delivery of {@code value} in group inventory, topic orders. */
    public static Delivery<String> delivery(String group, String value, long fence) {
        return new Delivery<>(new IdempotencyKey(group, "orders", value), fence, 1,
                new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(), new byte[0]), value);
    }

    /**
     * Creates the ledger table (the DDL for the connection's database) and a plain effect table (no
     * unique key: the ledger is the guard).
     */
    public static void createTables(Connection connection, String database) throws SQLException {
        JdbcEffectLedger.builder(borrowed(connection)).createTable(true).build();
        try (var statement = connection.createStatement()) {
            statement.execute("create table if not exists stock_movement (idempotency_key varchar(512) not null, "
                    + "quantity int not null)");
        }
    }

    /** The transactional effect used across tests: one stock movement row. */
    public static <T> TransactionalHandler<T> insertMovement() {
        return (delivery, tx) -> {
            try (var insert = tx.prepareStatement("insert into stock_movement values (?, -1)")) {
                insert.setString(1, delivery.key().value());
                insert.executeUpdate();
            }
        };
    }

    /** Rows of stock_movement whose key starts with {@code prefix}. */
    public static int movementsWithPrefix(Connection connection, String prefix) throws SQLException {
        try (var select = connection.prepareStatement(
                "select count(*) from stock_movement where idempotency_key like ?")) {
            select.setString(1, prefix + "%");
            try (var rows = select.executeQuery()) {
                rows.next();
                return rows.getInt(1);
            }
        }
    }

    /** Rows of stock_movement for a key. */
    public static int movements(Connection connection, String key) throws SQLException {
        try (var select = connection.prepareStatement("select count(*) from stock_movement where idempotency_key = ?")) {
            select.setString(1, key);
            try (var rows = select.executeQuery()) {
                rows.next();
                return rows.getInt(1);
            }
        }
    }
}
