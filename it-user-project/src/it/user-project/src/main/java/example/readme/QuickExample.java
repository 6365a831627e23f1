package example.readme;

import static example.readme.Inventory.deductStock;
import static example.readme.Inventory.releaseReservation;

// tag::processor[]
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.redis.RedisClaimStore;
// end::processor[]
import dev.idem.core.spi.DeadLetterPublisher;
import example.inventory.Order;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;

/** docs/guide/core.md, "Quick example (consumer-core)". */
final class QuickExample {

    void run(RedissonClient redisson, DataSource dataSource, DeadLetterPublisher publisher, MeterRegistry meterRegistry,
             Envelope envelope) {
        // tag::processor[]
        RedisClaimStore claims = RedisClaimStore.builder(redisson).build();          // your RedissonClient
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();      // checks the table exists

        IdempotentProcessor<Order> processor = ledger.<Order>processor((delivery, tx) ->
                deductStock(tx, delivery.payload()))             // effect + ledger row in one transaction
            .group("inventory")
            .codec(PayloadCodec.json(Order.class))               // java.time works; or json(yourMapper, Order.class)
            .keys(KeySource.payload(order -> order.id() + ":deduct"))   // a business key, not the broker id
            .claims(claims)
            .deadLetters(publisher)                              // the Kafka or RocketMQ adapter provides one
            .compensation(ledger.compensation((deadLetter, tx) ->   // in the ledger's transaction:
                releaseReservation(tx, deadLetter)))             // once, kill -9 included
            .meterRegistry(meterRegistry)                        // optional: no metrics without it
            .build();

        Outcome outcome = processor.process(envelope);           // Applied, Duplicate, Busy, Retrying, Deferred, DeadLettered
        if (outcome.disposition().acknowledges()) { /* commit */ } else { /* redeliver after outcome.disposition().delay() */ }
        // end::processor[]
    }
}
