package dev.idem.rocketmq;

import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.redis.RedisClaimStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A consumer process of its own, started by {@link ConsumerProcessesIT} as a child JVM: it consumes
 * a topic through {@link IdemRocketMqConsumer} and writes one line per applied message,
 * {@code <queueId> <key>}, to a file, until it is killed.
 *
 * <p>Arguments: name server address, group, topic, Redis URI, key prefix, output file.
 */
public final class ChildConsumerMain {

    private ChildConsumerMain() {
    }

    public static void main(String[] args) throws Exception {
        String nameServer = args[0];
        String group = args[1];
        String topic = args[2];
        Config config = new Config();
        config.useSingleServer().setAddress(args[3]);
        RedissonClient redisson = Redisson.create(config);
        Path out = Path.of(args[5]);
        PrintWriter lines = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND), true);
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> {
            MessageExt message = delivery.envelope().source(MessageExt.class).orElseThrow();
            synchronized (lines) {
                lines.println(message.getQueueId() + " " + delivery.key().value());
            }
        })
                .claims(RedisClaimStore.builder(redisson).keyPrefix(args[4]).build())
                // This test is about queue assignment: the claim alone guards it.
                .dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.bytes())
                .keys(KeySource.messageKey())
                .meterRegistry(new SimpleMeterRegistry());
        IdemRocketMqConsumer<byte[]> consumer = IdemRocketMqConsumer.builder(nameServer, group, processor)
                .subscribe(topic, "*").consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET).concurrency(4).build();
        consumer.start();
        lines.flush();
        Files.writeString(Path.of(args[5] + ".started"), "started");
        // Runs until the test kills the process.
        while (true) {
            TimeUnit.SECONDS.sleep(60);
        }
    }
}
