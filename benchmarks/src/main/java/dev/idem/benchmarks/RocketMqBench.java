package dev.idem.benchmarks;

import dev.idem.core.DedupCheck;
import dev.idem.core.DeliveryHandler;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.redis.RedisClaimStore;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import dev.idem.testkit.RocketMqBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
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
 * RocketMQ: one topic consumed from its first offset by a new group per variant and round, all
 * with the same push-consumer settings (20 threads, batches of up to 32): {@code raw} counts,
 * {@code naive} wraps each message in SET NX PX / SET, {@code idem} is an
 * {@link IdemRocketMqConsumer} as users build it (Redis claim store, no business check). Then the
 * added latency at a steady rate.
 */
final class RocketMqBench {

    private static final Logger LOG = LoggerFactory.getLogger(RocketMqBench.class);
    private static final int QUEUES = 4;
    private static final int BATCH = 32;
    private static final int SEND_BATCH = 100;

    private final RocketMqBroker rocketMq;
    private final RedissonClient redisson;
    private final RedisProbe probe;
    private final Plan plan;

    RocketMqBench(RocketMqBroker rocketMq, RedissonClient redisson, Plan plan) {
        this.rocketMq = rocketMq;
        this.redisson = redisson;
        this.probe = new RedisProbe(redisson);
        this.plan = plan;
    }

    /** The warm-up round, then {@code plan.rounds()} rounds of raw, idem, naive; warm-up not returned. */
    List<Result> throughput() throws Exception {
        String topic = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        rocketMq.createTopic(topic, QUEUES);
        produce(topic, plan.rocketMqMessages());
        return Rounds.run("rocketmq", plan, probe, (variant, group, limit) -> run(topic, variant, group, limit));
    }

    private Meter.Measured run(String topic, String variant, String group, Duration limit) throws Exception {
        Meter meter = new Meter();
        switch (variant) {
            case "raw" -> {
                return withListener(topic, group, meter, limit, () -> { }, plan.rocketMqMessages(), message -> { });
            }
            case "naive" -> {
                String prefix = group + ":";
                return withListener(topic, group, meter, limit, () -> { }, plan.rocketMqMessages(), message -> {
                    RBucket<String> bucket = redisson.getBucket(prefix + message.getKeys(), StringCodec.INSTANCE);
                    if (bucket.setIfAbsent("claimed", Duration.ofSeconds(30))) {
                        bucket.set("done", Duration.ofDays(7));
                    }
                });
            }
            case "idem" -> {
                return withIdem(topic, group, meter, limit, () -> { }, plan.rocketMqMessages(), delivery -> { });
            }
            default -> throw new IllegalArgumentException(variant);
        }
    }

    /**
     * Raw and idem at {@code plan.steadyRate()} messages per second, after a warm-up of
     * {@link Steady#WARM_UP} messages that are not measured.
     */
    List<Latency> latency() throws Exception {
        List<Latency> latencies = new ArrayList<>();
        DefaultMQProducer producer = producer();
        try {
            for (String variant : List.of("raw", "idem")) {
                String topic = "steady-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
                rocketMq.createTopic(topic, QUEUES);
                String group = "steady-" + variant + "-" + UUID.randomUUID().toString().substring(0, 8);
                Steady steady = new Steady(plan);
                Runnable send = () -> steady.send((i, timed) -> {
                    Message message = new Message(topic, timed);
                    message.setKeys(String.format("steady-%08d", i));
                    try {
                        producer.sendOneway(message);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                if (variant.equals("raw")) {
                    withListener(topic, group, steady.meter(), steady.limit(), send, steady.total(),
                            message -> steady.handled(message.getBody()));
                } else {
                    withIdem(topic, group, steady.meter(), steady.limit(), send, steady.total(),
                            delivery -> steady.handled(delivery.payload()));
                }
                Latency latency = steady.summary("rocketmq", variant);
                LOG.info("rocketmq steady {}: {}", variant, latency);
                latencies.add(latency);
                probe.forget("bench:" + group + ":*");
            }
        } finally {
            producer.shutdown();
        }
        return latencies;
    }

    /** Raw and naive: a push consumer whose listener handles each message of its batch. */
    private Meter.Measured withListener(String topic, String group, Meter meter, Duration limit, Runnable produce,
                                        int messages, Consumer<MessageExt> handler) throws Exception {
        rocketMq.createRetryTopic(group);
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        settings(consumer, group);
        consumer.subscribe(topic, "*");
        consumer.setConsumeThreadMin(20);
        consumer.setConsumeThreadMax(20);
        consumer.setConsumeMessageBatchMaxSize(BATCH);
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            meter.arrived();
            msgs.forEach(handler);
            meter.handled(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        try {
            produce.run();
            return meter.await(messages, limit);
        } finally {
            consumer.shutdown();
        }
    }

    /** Idem as users build it; the handler is counted as it ends. */
    private Meter.Measured withIdem(String topic, String group, Meter meter, Duration limit, Runnable produce,
                                    int messages, DeliveryHandler<byte[]> handler) throws Exception {
        rocketMq.createRetryTopic(group);
        IdempotentProcessor.Builder<byte[]> processor = IdempotentProcessor.<byte[]>builder(delivery -> {
                    meter.arrived();
                    handler.handle(delivery);
                    meter.handled(1);
                })
                .claims(RedisClaimStore.builder(redisson).keyPrefix("bench:" + group + ":").build())
                .dedupCheck(DedupCheck.none()).codec(PayloadCodec.bytes()).keys(KeySource.messageKey())
                .deadLetters(letter -> {
                    throw new IllegalStateException("no dead letters expected");
                })
                .meterRegistry(new SimpleMeterRegistry());
        try (IdemRocketMqConsumer<byte[]> consumer = IdemRocketMqConsumer.builder(rocketMq.nameServerAddress(), group,
                        processor)
                .subscribe(topic, "*").batchSize(BATCH).concurrency(20)
                .consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET)
                .client(c -> c.setPullBatchSize(BATCH))
                .build()) {
            consumer.start();
            produce.run();
            return meter.await(messages, limit);
        }
    }

    private void settings(DefaultMQPushConsumer consumer, String group) {
        consumer.setNamesrvAddr(rocketMq.nameServerAddress());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setPullBatchSize(BATCH);
        consumer.setInstanceName(group);
    }

    private DefaultMQProducer producer() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("bench-producer-" + UUID.randomUUID());
        producer.setNamesrvAddr(rocketMq.nameServerAddress());
        producer.setInstanceName(UUID.randomUUID().toString());
        producer.start();
        return producer;
    }

    private void produce(String topic, int messages) throws Exception {
        long started = System.nanoTime();
        DefaultMQProducer producer = producer();
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
}
