package dev.idem.kafka.share;

import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.jdbc.LedgerFixture;
import dev.idem.kafka.share.ShareScenario.Order;
import dev.idem.redis.Guards;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A share consumer process of its own, started by {@link ShareKillIT}: it applies every order but one,
 * whose handler writes {@code started <id>} to {@code <out>} and then never returns (the test kills the
 * process with SIGKILL there, before the effect is written).
 *
 * <p>Arguments: bootstrap servers, share group, topic, Redis URI, key prefix, output file, the order id
 * that hangs, {@code on} or {@code redis-only}, then the JDBC URL, user and password of the database.
 */
public final class ChildShareConsumerMain {

    /** Idem's lease in the child: it ends well before the record's lock (15 s), so the lock decides. */
    static final Duration LEASE = Duration.ofSeconds(3);

    private ChildShareConsumerMain() {
    }

    public static void main(String[] args) throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(args[3]);
        RedissonClient redisson = Redisson.create(config);
        Path out = Path.of(args[5]);
        String hangs = args[6];
        Guards guards = args[7].equals("on") ? Guards.ON : Guards.REDIS_ONLY;
        DataSource dataSource = LedgerFixture.dataSource(args[8], args[9], args[10]);
        JdbcEffectLedger ledger = JdbcEffectLedger.builder(dataSource).build();
        IdempotentProcessor.Builder<Order> processor = IdempotentProcessor.builder(
                guards.<Order>handler(ledger, dataSource, (delivery, tx) -> {
                    if (delivery.payload().id().equals(hangs)) {
                        Files.writeString(out, "started " + hangs + "\n", StandardCharsets.UTF_8,
                                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                        while (true) {
                            TimeUnit.SECONDS.sleep(60);
                        }
                    }
                    LedgerFixture.<Order>insertMovement().handle(delivery, tx);
                }))
                .claims(guards.claims(redisson, args[4]))
                .dedupCheck(guards.dedupCheck(ledger))
                .codec(PayloadCodec.json(Order.class))
                .keys(KeySource.payload(Order::id))
                .lease(LEASE);
        IdemKafkaShareConsumer<Order> consumer = IdemKafkaShareConsumer.builder(Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                        ConsumerConfig.GROUP_ID_CONFIG, args[1]), processor)
                .topics(args[2]).concurrency(2).build();
        consumer.start();
        // Runs until the test kills the process.
        while (true) {
            TimeUnit.SECONDS.sleep(60);
        }
    }
}
