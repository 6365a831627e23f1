package example.readme;

import static example.readme.Inventory.deductStock;

// tag::tracing[]
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.TraceKeys;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
import io.opentelemetry.api.OpenTelemetry;
import java.util.Map;
// end::tracing[]
import example.inventory.Order;

/** docs/guide/tracing.md: a consumer whose runs are traced. */
final class TracedConsumer {

    // tag::tracing[]
    // openTelemetry: your SDK, or GlobalOpenTelemetry.get() under the OpenTelemetry Java agent
    IdemKafkaConsumer<Order> build(JdbcEffectLedger ledger, RedisClaimStore claims, Map<String, Object> kafka,
                                   OpenTelemetry openTelemetry) {
        return IdemKafkaConsumer.builder(kafka, ledger
                .<Order>processor((delivery, tx) -> deductStock(tx, delivery.payload()))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(order -> order.id() + ":deduct"))
                .claims(claims)
                .openTelemetry(openTelemetry)      // a span per message run, under the producer's span
                .traceKeys(TraceKeys.HASHED))      // spans carry a hash of the key, never the key (default: none)
            .topics("orders")
            .build();
    }
    // end::tracing[]
}
