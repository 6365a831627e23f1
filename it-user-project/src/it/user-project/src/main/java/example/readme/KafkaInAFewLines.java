package example.readme;

import static example.readme.Inventory.deductStock;

// tag::kafka[]
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
// end::kafka[]
import example.inventory.Order;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** README and docs/guide/kafka.md, "Kafka in a few lines". */
final class KafkaInAFewLines {

    private static final Logger log = LoggerFactory.getLogger(KafkaInAFewLines.class);

    void run(JdbcEffectLedger ledger, RedisClaimStore claims) {
        // tag::kafka[]
        // tx is the java.sql.Connection of the transaction that also writes the ledger row
        Map<String, Object> kafka = Map.of("bootstrap.servers", "localhost:9092", "group.id", "inventory",
                "auto.offset.reset", "earliest");   // a new group starts from the oldest record, not the newest

        IdemKafkaConsumer<Order> consumer = IdemKafkaConsumer.builder(kafka, ledger
                .<Order>processor((delivery, tx) -> deductStock(tx, delivery.payload()))   // effect + ledger row, one transaction
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(order -> order.id() + ":deduct"))
                .claims(claims))
            .topics("orders")
            .concurrency(4)          // partitions in parallel, order kept within each
            .onFailure(failure -> log.warn("Idem consumer trouble", failure))
            .build();
        consumer.start();            // failures go to orders.DLT after 5 attempts
        // ...
        consumer.close();            // stop, finish or release, commit, then close renewal and the producer
        // end::kafka[]
    }
}
