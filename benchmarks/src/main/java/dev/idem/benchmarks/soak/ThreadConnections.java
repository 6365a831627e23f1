package dev.idem.benchmarks.soak;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * A DataSource that keeps one connection per thread open for the life of the process (a pool
 * stand-in: a consumer process has a handful of threads, and PostgreSQL allows 100 connections on
 * the shared machine). {@code close()} on a borrowed connection keeps it open. Thread-safe.
 */
final class ThreadConnections {

    private final String url;
    private final String user;
    private final String password;
    private final String init;
    private final ThreadLocal<Connection> current = new ThreadLocal<>();

    /** @param init SQL run once on each new connection, or null */
    ThreadConnections(String url, String user, String password, String init) {
        this.url = url;
        this.user = user;
        this.password = password;
        this.init = init;
    }

    DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        throw new SQLException("not supported by the soak's data source: " + method.getName());
                    }
                    return borrowed();
                });
    }

    /** This thread's connection itself, for the harness's own writes. */
    Connection connection() throws SQLException {
        Connection connection = current.get();
        if (connection == null || connection.isClosed()) {
            connection = DriverManager.getConnection(url, user, password);
            if (init != null) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute(init);
                }
            }
            current.set(connection);
        }
        return connection;
    }

    private Connection borrowed() throws SQLException {
        Connection real = connection();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
