package dev.idem.benchmarks;

import dev.idem.core.IdempotentProcessor;
import dev.idem.redis.RedisClaimStore;
import dev.idem.core.DedupCheck;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.rocketmq.DelayLevels;
import dev.idem.rocketmq.IdemConcurrentlyListener;
import dev.idem.testkit.RocketMqBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RocketMQ: the same messages consumed by three groups with the same push-consumer settings
 * (20 threads, batches of up to 32): a raw listener that counts, Idem's listener, and a naive
 * per-message SET NX PX / SET wrapper.
 */
final class RocketMqBench {

    private static final Logger LOG = LoggerFactory.getLogger(RocketMqBench.class);
    private static final int BATCH = 32;
    private static final int SEND_BATCH = 100;

    private final RocketMqBroker rocketMq;
    private final RedissonClient redisson;
    private final RedisProbe probe;
    private final int messages;

    RocketMqBench(RocketMqBroker rocketMq, RedissonClient redisson, int messages) {
        this.rocketMq = rocketMq;
        this.redisson = redisson;
        this.probe = new RedisProbe(redisson);
        this.messages = messages;
    }

    List<Result> run() throws Exception {
        String topic = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        rocketMq.createTopic(topic, 4);
        produce(topic);
        String prefix = "bench-" + UUID.randomUUID() + ":";

        Result raw = consume(topic, "raw", Set.of(), counter -> (msgs, context) -> {
            counter.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });

        AtomicLong handled = new AtomicLong();
        IdempotentProcessor<byte[]> processor = IdempotentProcessor.<byte[]>builder(d -> handled.incrementAndGet())
                .group("bench-idem").claims(RedisClaimStore.builder(redisson).keyPrefix(prefix).build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(deadLetter -> { throw new IllegalStateException("no dead letters expected"); })
                .meterRegistry(new SimpleMeterRegistry()).build();
        IdemConcurrentlyListener<byte[]> idem = IdemConcurrentlyListener.of(processor, DelayLevels.defaults());
        Result idemResult = consume(topic, "idem", Set.of("evalsha", "eval"), counter -> (msgs, context) -> {
            ConsumeConcurrentlyStatus status = idem.consumeMessage(msgs, context);
            counter.addAndGet(context.getAckIndex() + 1);
            return status;
        });
        processor.close();

        Result naive = consume(topic, "naive", Set.of("set"), counter -> (msgs, context) -> {
            for (MessageExt message : msgs) {
                RBucket<String> bucket = redisson.getBucket(prefix + "naive:" + message.getKeys(), StringCodec.INSTANCE);
                if (bucket.setIfAbsent("claimed", Duration.ofSeconds(30))) {
                    bucket.set("done", Duration.ofDays(7));
                }
            }
            counter.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        return List.of(raw, idemResult, naive);
    }

    private void produce(String topic) throws Exception {
        long started = System.nanoTime();
        DefaultMQProducer producer = new DefaultMQProducer("bench-producer-" + UUID.randomUUID());
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.start();
        try {
            List<Message> batch = new ArrayList<>(SEND_BATCH);
            for (int i = 0; i < messages; i++) {
                Message message = new Message(topic, Payloads.order(i));
                message.setKeys(String.format("order-%08d:deduct", i));
                batch.add(message);
                if (batch.size() == SEND_BATCH || i == messages - 1) {
                    producer.send(batch);
                    batch = new ArrayList<>(SEND_BATCH);
                }
            }
        } finally {
            producer.shutdown();
        }
        LOG.info("produced {} RocketMQ messages in {} ms", messages, (System.nanoTime() - started) / 1_000_000);
    }

    private interface ListenerFactory {
        MessageListenerConcurrently listener(AtomicInteger consumed);
    }

    private Result consume(String topic, String variant, Set<String> clientCommands, ListenerFactory factory)
            throws Exception {
        AtomicInteger consumed = new AtomicInteger();
        AtomicLong first = new AtomicLong();
        AtomicLong last = new AtomicLong();
        Latencies latencies = new Latencies(messages);
        MessageListenerConcurrently inner = factory.listener(consumed);
        String group = "bench-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
        rocketMq.createRetryTopic(group);
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(rocketMq.nameServerAddress());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeMessageBatchMaxSize(BATCH);
        consumer.setPullBatchSize(BATCH);
        consumer.setInstanceName(group);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            long entered = System.nanoTime();
            first.compareAndSet(0, entered);
            ConsumeConcurrentlyStatus status = inner.consumeMessage(msgs, context);
            long left = System.nanoTime();
            latencies.add(left - entered, msgs.size());
            last.set(left);
            return status;
        });
        Map<String, Long> before = probe.commandCalls();
        consumer.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (consumed.get() < messages && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
        } finally {
            consumer.shutdown();
        }
        if (consumed.get() < messages) {
            throw new IllegalStateException(variant + " consumed only " + consumed.get() + " of " + messages);
        }
        Map<String, Long> after = probe.commandCalls();
        double seconds = (last.get() - first.get()) / 1e9;
        Result result = new Result("rocketmq", variant, messages, seconds,
                RedisProbe.of(before, after, clientCommands) / (double) messages,
                RedisProbe.total(before, after) / (double) messages,
                latencies.percentileMillis(50), latencies.percentileMillis(99));
        LOG.info("rocketmq {}: {} messages in {} s = {} messages/s", variant, messages,
                String.format("%.2f", seconds), String.format("%.0f", result.perSecond()));
        return result;
    }
}
