package dev.idem.spring.outbox;

import dev.idem.spring.IdempotentListener;
import dev.idem.spring.KeyFrom;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** Downstream of the outbox: applies each stock-reserved message once, keyed on the outbox's id. */
@Component
public class ShippingListener {

    private final JdbcTemplate jdbc;
    private final String table;

    public ShippingListener(JdbcTemplate jdbc, @Value("${test.table}") String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @IdempotentListener(topic = "${test.reserved}", group = "${test.group}-shipping", name = "shipping",
            keySource = KeyFrom.OUTBOX_ID)
    @Transactional
    public void ship(String reserved) {
        jdbc.update("insert into " + table + " (id) values (?)", "ship:" + reserved.substring("reserved ".length()));
    }
}
