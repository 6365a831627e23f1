package dev.idem.micronaut.app;

import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.micronaut.IdempotentListener;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Reserves stock and tells the next service through the injected outbox, in the listener's
 * transaction; {@link #place} does the same for an order taken outside any listener.
 */
@Singleton
@Requires(property = "test.outbox.topic")
public class OutboxStock {

    public static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    private final DataSource dataSource;
    private final Outbox outbox;
    private final String table;
    private final String reserved;

    public OutboxStock(DataSource dataSource, Outbox outbox, @Value("${test.outbox.table}") String table,
                       @Value("${test.outbox.reserved}") String reserved) {
        this.dataSource = dataSource;
        this.outbox = outbox;
        this.table = table;
        this.reserved = reserved;
    }

    @IdempotentListener(name = "outbox-stock", topic = "${test.outbox.topic}", group = "${test.outbox.group}", key = "id",
            lease = "10s")
    @Transactional
    public void onOrder(Order order) throws SQLException {
        int call = CALLS.computeIfAbsent(order.id(), k -> new AtomicInteger()).incrementAndGet();
        insert(order.id());
        outbox.send(OutboxMessage.to(reserved).key(order.id()).value("reserved " + order.id()));
        if (call <= order.failures()) {
            throw new IllegalStateException("no stock for " + order.id() + " (call " + call + ")");
        }
    }

    /** Records the order and sends its event; a refused order throws after both, and rolls both back. */
    @Transactional
    public String place(String id, boolean refuse) throws SQLException {
        insert("desk:" + id);
        String messageId = outbox.send(OutboxMessage.to(reserved).key("desk:" + id).value("placed " + id));
        if (refuse) {
            throw new IllegalStateException("order " + id + " refused after its event was written");
        }
        return messageId;
    }

    /** Sends with no transaction: refused. */
    public String sendWithoutTransaction(String id) {
        return outbox.send(OutboxMessage.to(reserved).key(id).value("placed " + id));
    }

    private void insert(String id) throws SQLException {
        // The transaction's connection (Micronaut's DataSource inside @Transactional): not closed here.
        Connection connection = dataSource.getConnection();
        try (PreparedStatement insert = connection.prepareStatement("insert into " + table + " (id) values (?)")) {
            insert.setString(1, id);
            insert.executeUpdate();
        }
    }
}
