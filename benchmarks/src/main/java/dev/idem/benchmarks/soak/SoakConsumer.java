package dev.idem.benchmarks.soak;

import dev.idem.core.Backoff;
import dev.idem.core.ConsumerState;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdemConsumer;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.kafka.share.IdemKafkaShareConsumer;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.RedisUrl;
import dev.idem.rocketmq.DelayLevels;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer process of the soak, started by {@link Soak} as a child JVM: an
 * {@link IdemKafkaConsumer}, an {@link IdemKafkaShareConsumer} or an {@link IdemRocketMqConsumer}, in
 * guarded mode (the JDBC ledger) or Redis-only mode, as an application would run it, until it is killed. It exits by itself when its parent is gone.
 * Settings come from {@link ConsumerSpec}'s system properties.
 */
public final class SoakConsumer {

    private static final Logger LOG = LoggerFactory.getLogger(SoakConsumer.class);
    // Short retries: a Kafka partition waits out each backoff, and 15% of the ids fail at least once.
    // 0.1, 0.2, 0.4, 0.8 s: a poison message reaches its dead letter in about 1.5 s plus its runs.
    private static final Backoff BACKOFF = Backoff.exponential(Duration.ofMillis(100), Duration.ofMillis(1600), 0.2);
    // The test kit's broker runs every delay level at one second.
    private static final DelayLevels ONE_SECOND_LEVELS = DelayLevels.parse(String.join(" ", Collections.nCopies(18, "1s")));
    // Kafka: a member killed with SIGKILL is noticed after this, not after the 45 s default; a
    // SIGSTOP longer than it costs the member its partitions.
    private static final int SESSION_TIMEOUT_MS = 10_000;
    // Outcome counts reach the orchestrator this often; a kill loses at most this much of them.
    private static final Duration COUNTS_EVERY = Duration.ofMillis(500);

    private SoakConsumer() {
    }

    public static void main(String[] args) throws Exception {
        ConsumerSpec spec = ConsumerSpec.fromSystemProperties();
        int slot = ConsumerSpec.slotFromSystemProperties();
        long pid = ProcessHandle.current().pid();
        // Give up on a command within about two seconds while Redis is down: Idem then defers.
        Config config = RedisUrl.parse(spec.redis()).config(client -> client.setConnectTimeout(1_000).setTimeout(1_000)
                .setRetryAttempts(1).setRetryInterval(200));
        RedissonClient redisson = Redisson.create(config);
        Tables tables = new Tables(spec.tables());
        ThreadConnections ledgerConnections = new ThreadConnections(spec.jdbcUrl(), spec.jdbcUser(),
                spec.jdbcPassword(), null);
        // Call rows are bookkeeping: no need to wait for the disk.
        ThreadConnections callConnections = new ThreadConnections(spec.jdbcUrl(), spec.jdbcUser(),
                spec.jdbcPassword(), "set synchronous_commit to off");
        SoakWork work = new SoakWork(tables, slot, ledgerConnections, callConnections);
        IdempotentProcessor.Builder<String> processor = spec.guarded()
                ? JdbcEffectLedger.builder(ledgerConnections.dataSource()).table(tables.ledger()).build()
                        .<String>processor(work::handle)
                : IdempotentProcessor.<String>builder(work::handleUnguarded).dedupCheck(DedupCheck.none());
        processor.codec(PayloadCodec.utf8())
                .keys(KeySource.payload(id -> id))
                .claims(RedisClaimStore.builder(redisson).keyPrefix(spec.keyPrefix()).build())
                .lease(spec.lease())
                .backoff(BACKOFF)
                .compensation(work::compensate)
                .onOutcome(work::outcome);
        AutoCloseable consumer = switch (spec.broker()) {
            case "kafka" -> kafka(spec, processor);
            case "share" -> share(spec, processor);
            default -> rocketMq(spec, processor);
        };
        LOG.info("soak consumer {} (pid {}) consuming {} as {}", slot, pid, spec.topic(), spec.group());
        Files.writeString(spec.dir().resolve("ready-" + pid), Integer.toString(slot));
        Path counts = spec.dir().resolve("counts-" + slot + "-" + pid);
        ProcessHandle parent = ProcessHandle.current().parent().orElseThrow();
        while (parent.isAlive()) {
            work.writeCounts(counts);
            TimeUnit.MILLISECONDS.sleep(COUNTS_EVERY.toMillis());
        }
        LOG.warn("the orchestrator is gone; stopping");
        consumer.close();
        redisson.shutdown();
        System.exit(0);
    }

    private static AutoCloseable kafka(ConsumerSpec spec, IdempotentProcessor.Builder<String> processor)
            throws InterruptedException {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, spec.address());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, spec.group());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_TIMEOUT_MS);
        config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, SESSION_TIMEOUT_MS / 10);
        // Smaller polls than the default 500: more batches, so more claims race the other consumers.
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100);
        IdemKafkaConsumer<String> consumer = IdemKafkaConsumer.builder(config, processor)
                .topics(spec.topic())
                .concurrency(spec.concurrency())
                .onFailure(failure -> LOG.warn("Kafka consumer trouble", failure))
                .build();
        return started(consumer);
    }

    private static AutoCloseable share(ConsumerSpec spec, IdempotentProcessor.Builder<String> processor)
            throws InterruptedException {
        // A share group: its start offset, delivery limit and lock duration are group configs (KafkaSoakBroker).
        IdemKafkaShareConsumer<String> consumer = IdemKafkaShareConsumer.builder(Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, spec.address(), ConsumerConfig.GROUP_ID_CONFIG, spec.group()),
                        processor)
                .topics(spec.topic())
                .concurrency(spec.concurrency())
                .onFailure(failure -> LOG.warn("Kafka share consumer trouble", failure))
                .build();
        return started(consumer);
    }

    /** Starts a Kafka consumer of either kind and waits, at most a minute, until it runs. */
    private static IdemConsumer started(IdemConsumer consumer)
            throws InterruptedException {
        consumer.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (consumer.state() != ConsumerState.RUNNING && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(50);
        }
        if (consumer.state() != ConsumerState.RUNNING) {
            throw new IllegalStateException(consumer.getClass().getSimpleName() + " not running after 60 s: "
                    + consumer.state(), consumer.failure());
        }
        return consumer;
    }

    private static AutoCloseable rocketMq(ConsumerSpec spec, IdempotentProcessor.Builder<String> processor) {
        IdemRocketMqConsumer<String> consumer = IdemRocketMqConsumer.builder(spec.address(), spec.group(), processor)
                .subscribe(spec.topic(), "*")
                .consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET)
                .concurrency(spec.concurrency())
                // Four messages per listener call, claimed in one round trip.
                .batchSize(4)
                .delayLevels(ONE_SECOND_LEVELS)
                .build();
        consumer.start();
        return consumer;
    }
}
