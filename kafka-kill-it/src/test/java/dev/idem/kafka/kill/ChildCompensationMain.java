package dev.idem.kafka.kill;

import dev.idem.core.Compensation;
import dev.idem.core.DeadLetter;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.NonRetryableException;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A consumer process of its own, started by {@link CompensationAfterKillIT}: every record is a
 * poison record, dead-lettered on its first failure. The compensation hook writes
 * {@code started <key> <compensation id>} to {@code <out>.started}, then, by the mode:
 * {@code hang} never returns (the test kills the process with SIGKILL there), {@code halt-inside}
 * halts the JVM; otherwise the compensation writes {@code done <key> <compensation id>} to
 * {@code <out>.done} once the hook returned, and {@code halt-after} then halts the JVM, before Idem
 * records the outcome.
 *
 * <p>Arguments: bootstrap servers, group, topic, Redis URI, key prefix, output path prefix, mode,
 * then {@code none} (Redis-only mode), or {@code ledger} or {@code ledger-transactional} with the
 * JDBC URL, user and password of the database whose ledger table guards the key; with
 * {@code ledger-transactional} the hook is the ledger's transactional compensation and writes a
 * row to table {@code refund} (compensation id, group, key) in its transaction.
 */
public final class ChildCompensationMain {

    /** The lease: short, so the test does not wait long for the killed owner's compensation lease. */
    static final Duration LEASE = Duration.ofSeconds(2);

    private ChildCompensationMain() {
    }

    public static void main(String[] args) throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(args[3]);
        RedissonClient redisson = Redisson.create(config);
        String out = args[5];
        String mode = args[6];
        IdempotentProcessor.Builder<byte[]> processor;
        Compensation compensation = letter -> hook(out, mode, letter);
        if (args[7].equals("none")) {
            processor = IdempotentProcessor.<byte[]>builder(delivery -> {
                throw new NonRetryableException("poison");
            }).dedupCheck(DedupCheck.none());
        } else {
            JdbcEffectLedger ledger = JdbcEffectLedger.builder(LedgerFixture.dataSource(args[8], args[9], args[10]))
                    .build();
            processor = ledger.processor((delivery, tx) -> {
                throw new NonRetryableException("poison");
            });
            if (args[7].equals("ledger-transactional")) {
                compensation = ledger.compensation((letter, tx) -> {
                    try (PreparedStatement refund = tx.prepareStatement("insert into refund values (?, ?, ?)")) {
                        refund.setString(1, letter.compensationId());
                        refund.setString(2, letter.key().group());
                        refund.setString(3, letter.key().value());
                        refund.executeUpdate();
                    }
                    hook(out, mode, letter);
                });
            }
        }
        Compensation run = compensation;
        processor.claims(RedisClaimStore.builder(redisson).keyPrefix(args[4]).build())
                .codec(PayloadCodec.bytes())
                .keys(KeySource.messageKey())
                .lease(LEASE)
                .compensation(letter -> {
                    run.compensate(letter);
                    append(out + ".done", "done " + letter.key().value() + " " + letter.compensationId());
                    if (mode.equals("halt-after")) {
                        Runtime.getRuntime().halt(1);   // no shutdown hook, no finally: as kill -9
                    }
                });
        IdemKafkaConsumer<byte[]> consumer = IdemKafkaConsumer.builder(Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                        ConsumerConfig.GROUP_ID_CONFIG, args[1],
                        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                        // the killed process leaves the group after this, not Kafka's default 45 s
                        ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000,
                        ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000), processor)
                .topics(args[2]).build();
        consumer.start();
        // Runs until the test kills the process.
        while (true) {
            TimeUnit.SECONDS.sleep(60);
        }
    }

    private static void hook(String out, String mode, DeadLetter letter) throws Exception {
        append(out + ".started", "started " + letter.key().value() + " " + letter.compensationId());
        while (mode.equals("hang")) {
            TimeUnit.SECONDS.sleep(60);
        }
        if (mode.equals("halt-inside")) {
            Runtime.getRuntime().halt(1);
        }
    }

    private static void append(String file, String line) throws Exception {
        Files.writeString(Path.of(file), line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
