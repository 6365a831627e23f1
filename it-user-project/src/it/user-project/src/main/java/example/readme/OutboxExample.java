package example.readme;

import static example.readme.Inventory.deductStock;

// tag::outbox[]
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.KafkaOutboxPublisher;
import dev.idem.redis.RedisClaimStore;
// end::outbox[]
// tag::downstream[]
import dev.idem.core.outbox.OutboxStatus;
// end::downstream[]
import example.inventory.Order;
import java.sql.Connection;
import java.util.Map;
import javax.sql.DataSource;

/** docs/guide/outbox.md: a handler that sends through the outbox, the relay, and a consumer downstream. */
final class OutboxExample {

    void run(DataSource dataSource, JdbcEffectLedger ledger, RedisClaimStore claims) throws Exception {
        // tag::outbox[]
        JdbcOutbox outbox = JdbcOutbox.builder(dataSource).build();   // table idem_outbox: outbox.ddl() prints it
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", "localhost:9092"))
                .build();
        OutboxRelay relay = outbox.relay(publisher).build().start();  // publishes what commits; one per process

        IdemKafkaConsumer<Order> inventory = IdemKafkaConsumer.builder(Map.of("bootstrap.servers", "localhost:9092",
                        "group.id", "inventory", "auto.offset.reset", "earliest"), ledger
                .<Order>processor((delivery, tx) -> {
                    deductStock(tx, delivery.payload());                 // the effect, the ledger row
                    outbox.send(tx, OutboxMessage.to("stock-reserved")     // and what it tells the next
                            .key(delivery.payload().sku())                 // service: one transaction
                            .value(delivery.payload().json()));
                })
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(Order::id))
                .claims(claims))
            .topics("orders")
            .build();
        inventory.start();
        // ...
        inventory.close();
        relay.close();               // stops publishing; rows not yet published wait in the table
        publisher.close();
        // end::outbox[]
    }

    void downstream(JdbcOutbox outbox, JdbcEffectLedger shippingLedger, RedisClaimStore claims) throws Exception {
        // tag::downstream[]
        IdemKafkaConsumer<String> shipping = IdemKafkaConsumer.builder(Map.of("bootstrap.servers", "localhost:9092",
                        "group.id", "shipping", "auto.offset.reset", "earliest"), shippingLedger
                .<String>processor((delivery, tx) -> ship(tx, delivery.payload()))
                .codec(PayloadCodec.utf8())
                .keys(KeySource.outboxId())     // the id the outbox gave the message: a copy is a duplicate
                .claims(claims))
            .topics("stock-reserved")
            .build();

        OutboxStatus status = outbox.status();  // backlog, dead rows, the oldest unsent row, per destination
        if (status.oldestUnsentAge().map(age -> age.toMinutes() > 5).orElse(false)) {
            // alert: the relay is stuck, or the broker has been down for five minutes
        }
        // end::downstream[]
        shipping.close();
    }

    private static void ship(Connection tx, String reservation) {
    }
}
