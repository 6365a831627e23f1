package dev.idem.kafka.kill;

import dev.idem.core.KeySource;
import dev.idem.core.Outcome;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxMessage;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.KafkaOutboxPublisher;
import dev.idem.redis.RedisClaimStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A consumer process of its own, started by {@link OutboxAfterKillIT}: it applies each order (a
 * stock movement and a shipment request through the outbox, one transaction) and writes
 * {@code applied <key>} to {@code <out>} once the outcome is known; its relay then stops for good,
 * as the mode says, until the test kills the process: {@code before-publish} before the broker has
 * anything, {@code after-publish} once the broker has the batch and before its rows are marked
 * (writing {@code published <n>}).
 *
 * <p>Arguments: bootstrap servers, group, orders topic, shipments topic, Redis URI, key prefix,
 * output path, mode, JDBC URL, user, password, outbox table.
 */
public final class ChildOutboxMain {

    private ChildOutboxMain() {
    }

    public static void main(String[] args) throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(args[4]);
        RedissonClient redisson = Redisson.create(config);
        String shipments = args[3];
        String out = args[6];
        String mode = args[7];
        DataSource dataSource = LedgerFixture.dataSource(args[8], args[9], args[10]);
        JdbcOutbox outbox = JdbcOutbox.builder(dataSource).table(args[11]).build();
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
        KafkaOutboxPublisher kafka = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", args[0])).build();
        OutboxPublisher stopping = records -> {
            if (mode.equals("after-publish")) {
                kafka.publish(records);
                append(out, "published " + records.size());
            }
            while (true) {
                TimeUnit.SECONDS.sleep(60);   // until the test kills the process
            }
        };
        OutboxRelay relay = outbox.relay(stopping).build();
        IdemKafkaConsumer<String> consumer = IdemKafkaConsumer.builder(Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                        ConsumerConfig.GROUP_ID_CONFIG, args[1],
                        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                ledger.<String>processor((delivery, tx) -> {
                    LedgerFixture.<String>insertMovement().handle(delivery, tx);
                    outbox.send(tx, OutboxMessage.to(shipments).key(delivery.payload()).value(delivery.payload()));
                })
                        .claims(RedisClaimStore.builder(redisson).keyPrefix(args[5]).build())
                        .codec(PayloadCodec.utf8())
                        .keys(KeySource.payload(order -> order))
                        .onOutcome(outcome -> {
                            if (outcome instanceof Outcome.Applied applied) {
                                append(out, "applied " + applied.key().value());
                            }
                        }))
                .topics(args[2]).build();
        consumer.start();
        relay.start();
        while (true) {
            TimeUnit.SECONDS.sleep(60);
        }
    }

    static void append(String file, String line) {
        try {
            Files.writeString(Path.of(file), line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
