package example.readme;

// tag::consumer[]
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.rocketmq.IdemRocketMqConsumer;
// end::consumer[]
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.TransactionalHandler;
import dev.idem.redis.RedisClaimStore;
import example.inventory.Order;

/** README and docs/guide/rocketmq.md, "RocketMQ in one line": the consumer Idem builds around a handler. */
final class RocketMqConsumer {

    void run(JdbcEffectLedger ledger, TransactionalHandler<Order> handler, RedisClaimStore claims) {
        // tag::consumer[]
        IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer
            .builder("localhost:9876", "inventory", ledger.processor(handler)    // effect + ledger row, one transaction
                .claims(claims)
                .codec(PayloadCodec.json(Order.class)).keys(KeySource.payload(Order::id)))
            .subscribe("orders", "*")
            .batchSize(16)                 // messages per listener call; precise ackIndex on failure
            .orderly(false)                // true: a failed message holds its queue until it resolves
            .build();
        consumer.start();                  // failures go to orders_DLQ after 5 attempts
        // ...
        consumer.close();
        // end::consumer[]
    }
}
