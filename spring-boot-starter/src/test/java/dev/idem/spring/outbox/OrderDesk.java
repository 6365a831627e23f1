package dev.idem.spring.outbox;

import dev.idem.core.outbox.Outbox;
import dev.idem.core.outbox.OutboxMessage;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Takes orders outside any listener (a REST controller's service): the effect and its event in one transaction. */
@Service
public class OrderDesk {

    private final JdbcTemplate jdbc;
    private final Outbox outbox;
    private final String table;
    private final String placed;

    public OrderDesk(JdbcTemplate jdbc, Outbox outbox, @Value("${test.table}") String table,
                     @Value("${test.placed}") String placed) {
        this.jdbc = jdbc;
        this.outbox = outbox;
        this.table = table;
        this.placed = placed;
    }

    /** Records the order and sends {@code placed}; a refused order throws after both, and rolls both back. */
    @Transactional
    public String place(String id, boolean refuse) {
        jdbc.update("insert into " + table + " (id) values (?)", "desk:" + id);
        String messageId = outbox.send(OutboxMessage.to(placed).key(id).value("placed " + id));
        if (refuse) {
            throw new IllegalStateException("order " + id + " refused after its event was written");
        }
        return messageId;
    }

    /** Sends with no transaction: refused. */
    public String sendWithoutTransaction(String id) {
        return outbox.send(OutboxMessage.to(placed).key(id).value("placed " + id));
    }
}
