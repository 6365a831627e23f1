package dev.idem.kafka.kill;

import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.KafkaOutboxPublisher;
import dev.idem.redis.RedisClaimStore;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One tier of {@link OutboxChainStormIT}'s chain, a process of its own the test kills with SIGKILL:
 * {@code inventory} applies each order (a row in its audit table) and tells shipping through the
 * outbox, with its relay in the same process; {@code inventory-on-outcome} sends instead from
 * {@code onOutcome}, after the commit, with a producer that batches (linger 100 ms, for throughput); {@code shipping}
 * applies each message of {@code reserved} (a row in its audit table), keyed on the outbox id, or on
 * the order when the inventory sends from {@code onOutcome} (there is no outbox id then). Both tiers
 * run on the ledger. The audit tables have no unique key: they count every effect.
 *
 * <p>Arguments: role, instance, bootstrap servers, group, topic in, topic out, Redis URI, key
 * prefix, JDBC URL, user, password, outbox table, audit table.
 */
public final class ChainTierMain {

    private ChainTierMain() {
    }

    public static void main(String[] args) throws Exception {
        String role = args[0];
        String servers = args[2];
        String out = args[5];
        String audit = args[12];
        Config config = new Config();
        config.useSingleServer().setAddress(args[6]);
        RedissonClient redisson = Redisson.create(config);
        DataSource dataSource = LedgerFixture.dataSource(args[8], args[9], args[10]);
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
        JdbcOutbox outbox = JdbcOutbox.builder(dataSource).table(args[11]).build();
        Map<String, Object> consumer = new HashMap<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers,
                ConsumerConfig.GROUP_ID_CONFIG, args[3],
                // A restarted instance takes its partitions back at once, without waiting for the session to end.
                ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, role + "-" + args[1],
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
        RedisClaimStore claims = RedisClaimStore.builder(redisson).keyPrefix(args[7]).build();
        IdemKafkaConsumer<String> tier;
        if (role.equals("shipping")) {
            boolean onOutboxId = args[13].equals("outbox-id");
            tier = IdemKafkaConsumer.builder(consumer, ledger.<String>processor((delivery, tx) ->
                                    audit(tx, audit, delivery.payload()))
                            .claims(claims).codec(PayloadCodec.utf8())
                            .keys(onOutboxId ? KeySource.outboxId() : KeySource.payload(order -> order))
                            .onOutcome(ChainTierMain::print))
                    .topics(args[4]).build();
        } else if (role.equals("inventory")) {
            tier = IdemKafkaConsumer.builder(consumer, ledger.<String>processor((delivery, tx) -> {
                                audit(tx, audit, delivery.payload());
                                outbox.send(tx, OutboxMessage.to(out).key(delivery.payload()).value(delivery.payload()));
                            })
                            .claims(claims).codec(PayloadCodec.utf8()).keys(KeySource.payload(order -> order))
                            .onOutcome(ChainTierMain::print))
                    .topics(args[4]).build();
            outbox.relay(KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", servers)).build())
                    .pollInterval(Duration.ofMillis(50)).build().start();
        } else {
            KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers, ProducerConfig.LINGER_MS_CONFIG, 100),
                    new StringSerializer(), new StringSerializer());
            Map<String, String> applied = new ConcurrentHashMap<>();
            tier = IdemKafkaConsumer.builder(consumer, ledger.<String>processor((delivery, tx) -> {
                                audit(tx, audit, delivery.payload());
                                applied.put(delivery.key().value(), delivery.payload());
                            })
                            .claims(claims).codec(PayloadCodec.utf8()).keys(KeySource.payload(order -> order))
                            .onOutcome(outcome -> {
                                // After the commit: the send the outbox replaces.
                                print(outcome);
                                if (outcome instanceof Outcome.Applied done) {
                                    String order = applied.remove(done.key().value());
                                    if (order != null) {
                                        producer.send(new ProducerRecord<>(out, order, order));
                                    }
                                }
                            }))
                    .topics(args[4]).build();
        }
        tier.start();
        System.out.println("started " + role + " " + args[1]);
        while (true) {
            TimeUnit.SECONDS.sleep(60);   // until the test kills the process
        }
    }

    /** Says on standard output that a run committed, so the test can kill the process while it works. */
    private static void print(Outcome outcome) {
        System.out.println((outcome instanceof Outcome.Applied ? "applied " : "outcome ") + outcome.key().value());
    }

    private static void audit(java.sql.Connection tx, String table, String order) throws java.sql.SQLException {
        try (PreparedStatement insert = tx.prepareStatement("insert into " + table + " (order_id) values (?)")) {
            insert.setString(1, order);
            insert.executeUpdate();
        }
    }
}
