package dev.idem.cli;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.Backoff;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.PostgresDatabase;
import io.opentelemetry.api.trace.Tracer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.redisson.api.RedissonClient;

/**
 * A guarded Idem processor for the tests' consumers (Redis claims, the PostgreSQL ledger) and what it
 * did: effects applied per order, the headers each saw, compensations, outcomes. Orders in
 * {@link #poisoned} fail.
 */
final class Effects {

    final Set<String> poisoned = ConcurrentHashMap.newKeySet();
    final Map<String, AtomicInteger> applied = new ConcurrentHashMap<>();
    final Map<String, Map<String, String>> headers = new ConcurrentHashMap<>();
    final List<DeadLetter> compensated = new CopyOnWriteArrayList<>();
    final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    final RedisClaimStore claims;
    final JdbcEffectLedger ledger;
    // The application's own tracer, when a test traces: the handler opens a span of its own.
    volatile Tracer tracer;

    Effects(RedissonClient redisson, String keyPrefix, PostgresDatabase postgres) {
        this.claims = RedisClaimStore.builder(redisson).keyPrefix(keyPrefix).build();
        this.ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(postgres.jdbcUrl(), postgres.user(),
                postgres.password())).createTable(true).build();
    }

    IdempotentProcessor.Builder<Order> processor() {
        return ledger.<Order>processor((delivery, tx) -> handle(delivery))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(Order::id))
                .claims(claims)
                .compensation(compensated::add)
                .backoff(Backoff.fixed(Duration.ofMillis(100)))
                .onOutcome(outcomes::add);
    }

    private void handle(Delivery<Order> delivery) {
        String id = delivery.payload().id();
        headers.put(id, delivery.envelope().headers());
        if (tracer != null) {
            tracer.spanBuilder("apply order").startSpan().end();
        }
        if (poisoned.contains(id)) {
            throw new IllegalStateException("no stock for " + id);
        }
        applied.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    }

    int applied(String id) {
        AtomicInteger count = applied.get(id);
        return count == null ? 0 : count.get();
    }

    long duplicates(String id) {
        return outcomes.stream().filter(o -> o instanceof Outcome.Duplicate && o.key().value().equals(id)).count();
    }
}
