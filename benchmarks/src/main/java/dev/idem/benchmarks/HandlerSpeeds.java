package dev.idem.benchmarks;

import dev.idem.core.ConsumerState;
import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.RedisClaimStore;
import dev.idem.testkit.KafkaBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis commands per message as handlers slow down: {@link IdemKafkaConsumer} (Redis-only, as users
 * build it, partitions one after another) with a handler that takes 0, 2 or 5 ms, counted over a
 * steady window (after the first batches, before the topic runs dry or the close), so that what
 * one batch costs is measured and not the start or the end. A 500-record poll then runs for 0.1 to
 * 2.5 s: the slower ones complete on the way, every second (the completion timer).
 */
final class HandlerSpeeds {

    private static final Logger LOG = LoggerFactory.getLogger(HandlerSpeeds.class);
    static final List<Duration> HANDLER_TIMES = List.of(Duration.ZERO, Duration.ofMillis(2), Duration.ofMillis(5));
    private static final Duration SETTLE = Duration.ofSeconds(3);
    private static final int RECORDS = 300_000;

    private final KafkaBroker kafka;
    private final RedissonClient redisson;
    private final RedisProbe probe;
    private final Duration window;

    HandlerSpeeds(KafkaBroker kafka, RedissonClient redisson, Plan plan) {
        this.kafka = kafka;
        this.redisson = redisson;
        this.probe = new RedisProbe(redisson);
        // Long enough for about ten 2.5-second polls of the slowest handler: a window's edges fall
        // inside polls, so a short one over- or under-counts a poll's claim.
        this.window = plan.quick() ? Duration.ofSeconds(5) : Duration.ofSeconds(24);
    }

    /** One result per handler time: broker {@code kafka-handler}, variant {@code idem <ms> ms}. */
    List<Result> run() throws Exception {
        String topic = "bench-speeds-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopic(topic, 6);
        OrderTopics.fill(kafka.bootstrapServers(), topic, RECORDS);
        List<Result> results = new ArrayList<>();
        for (Duration handlerTime : HANDLER_TIMES) {
            results.add(run(topic, handlerTime));
        }
        return results;
    }

    private Result run(String topic, Duration handlerTime) throws Exception {
        String group = "bench-speed-" + UUID.randomUUID().toString().substring(0, 8);
        Meter meter = new Meter();
        long handlerNanos = handlerTime.toNanos();
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> {
                    if (handlerNanos > 0) {
                        LockSupport.parkNanos(handlerNanos);
                    }
                    meter.handled(1);
                })
                .claims(RedisClaimStore.builder(redisson).keyPrefix("bench:" + group + ":").build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> {
                    throw new IllegalStateException("no dead letters expected");
                });
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Result result;
        try (IdemKafkaConsumer<byte[]> consumer = IdemKafkaConsumer.builder(config, processor).topics(topic).build()) {
            consumer.start();
            long waiting = System.nanoTime();
            while (consumer.state() != ConsumerState.RUNNING || meter.handledSoFar() == 0) {
                if (System.nanoTime() - waiting > Duration.ofSeconds(60).toNanos()) {
                    throw new IllegalStateException("Idem's consumer did not start consuming", consumer.failure());
                }
                Thread.sleep(10);
            }
            // A handler that does nothing drains the topic within seconds on a fast machine: the window
            // then starts after a tenth of it at the latest and ends before its last tenth.
            awaitUntil(System.nanoTime() + SETTLE.toNanos(), meter, RECORDS / 10);
            Map<String, Long> before = probe.commandCalls();
            long handledBefore = meter.handledSoFar();
            long started = System.nanoTime();
            awaitUntil(started + window.toNanos(), meter, RECORDS - RECORDS / 10);
            Map<String, Long> after = probe.commandCalls();
            long messages = meter.handledSoFar() - handledBefore;
            double seconds = (System.nanoTime() - started) / 1e9;
            result = new Result("kafka-handler", "idem " + handlerTime.toMillis() + " ms", 1, messages, seconds,
                    RedisProbe.of(before, after, java.util.Set.of("evalsha", "eval")) / (double) messages,
                    RedisProbe.total(before, after) / (double) messages, null, Double.NaN, Double.NaN, 1);
        } finally {
            probe.forget("bench:" + group + ":*");
        }
        LOG.info("handler {} ms: {} messages in {} s, {} Redis commands per message", handlerTime.toMillis(),
                result.messages(), String.format("%.1f", result.seconds()),
                String.format("%.3f", result.commandsPerMessage()));
        return result;
    }

    /** Sleeps until {@code deadline} (System.nanoTime) or until {@code handled} messages were handled. */
    private static void awaitUntil(long deadline, Meter meter, long handled) throws InterruptedException {
        while (System.nanoTime() < deadline && meter.handledSoFar() < handled) {
            Thread.sleep(5);
        }
    }
}
