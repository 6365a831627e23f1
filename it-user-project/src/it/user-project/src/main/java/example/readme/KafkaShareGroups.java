package example.readme;

import static example.readme.Inventory.deductStock;

// tag::share[]
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.kafka.share.IdemKafkaShareConsumer;
import dev.idem.redis.RedisClaimStore;
// end::share[]
import example.inventory.Order;
import java.util.Map;

/** docs/guide/kafka.md, "Kafka share groups". */
final class KafkaShareGroups {

    void run(JdbcEffectLedger ledger, RedisClaimStore claims) {
        // tag::share[]
        Map<String, Object> kafka = Map.of("bootstrap.servers", "localhost:9092",
                "group.id", "inventory-share");   // a share group: its start offset and limits are group configs

        IdemKafkaShareConsumer<Order> consumer = IdemKafkaShareConsumer.builder(kafka, ledger
                .<Order>processor((delivery, tx) -> deductStock(tx, delivery.payload()))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(order -> order.id() + ":deduct"))
                .claims(claims))
            .topics("orders")
            .concurrency(8)          // records at once; a share group keeps no order
            .build();
        consumer.start();            // refuses a share.delivery.count.limit below maxAttempts + 2
        // ...
        consumer.close();            // finish or release, acknowledge, then close renewal and the producer
        // end::share[]
    }
}
