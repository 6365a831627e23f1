package dev.idem.core.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/** One reused connection per thread, standing in for a pool in load tests. Close it at the end. */
public final class ThreadConnections implements AutoCloseable {

    private final String url;
    private final String user;
    private final String password;
    private final List<Connection> opened = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Connection> current = new ThreadLocal<>();

    public ThreadConnections(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    /** A DataSource whose connections are this thread's, and whose close() keeps them open. */
    public DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        throw new SQLException("not supported in tests: " + method.getName());
                    }
                    return borrowed();
                });
    }

    private Connection borrowed() throws SQLException {
        Connection connection = current.get();
        if (connection == null) {
            connection = DriverManager.getConnection(url, user, password);
            opened.add(connection);
            current.set(connection);
        }
        Connection real = connection;
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

    @Override
    public void close() throws SQLException {
        for (Connection connection : opened) {
            connection.close();
        }
    }
}
