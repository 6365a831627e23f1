package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DeadLetterHeaders;
import dev.idem.kafka.IdemKafkaConsumer;
import dev.idem.redis.TestRedisson;
import dev.idem.rocketmq.IdemRocketMqConsumer;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.api.RedissonClient;

/**
 * One message followed from a traced producer through Idem's run, its handler, its dead letter and
 * the operator's replay, on real brokers, exported to the OpenTelemetry SDK's in-memory exporter.
 */
@IdemTestKit
class TracingIT {

    private static RedissonClient redisson;
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();

    @BeforeAll
    static void connect(RedisEndpoint redis) {
        redisson = TestRedisson.connect(redis);
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @AfterEach
    void close() {
        otel.close();
    }

    @Test
    void onKafkaAMessageIsFollowedFromItsProducerThroughItsDeadLetterToItsReplay(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase postgres, TestNames names, @TempDir Path home) {
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        effects.tracer = otel.getTracer("inventory-app");
        String good = topic + "-good";
        String poison = topic + "-poison";
        effects.poisoned.add(poison);
        Operator operator = KafkaDeadLettersIT.operator(redis, postgres, names, home, "IDEM_KAFKA_BOOTSTRAP",
                kafka.bootstrapServers());
        try (IdemKafkaConsumer<Order> consumer = IdemKafkaConsumer.builder(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG,
                names.group(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), effects.processor().openTelemetry(otel))
                .topics(topic).build()) {
            consumer.start();
            Map<String, SpanContext> sent = new HashMap<>();
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()), new ByteArraySerializer(),
                    new ByteArraySerializer())) {
                for (String id : List.of(good, poison)) {
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, null, new Order(id, 1).json());
                    sent.put(id, publish(headers -> headers.forEach((name, value) ->
                            record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)))));
                    producer.send(record);
                }
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.compensated.size() == 1 && effects.applied(good) == 1);

            String failing = followedToTheDeadLetter("kafka", sent.get(good), sent.get(poison), effects);

            // The operator finds the failing run's trace from the dead letter, and replays it.
            Operator.Run show = operator.idem("dlq", "show", "0:0", "-b", "kafka", "-t", topic + ".DLT");
            assertThat(show.out()).as(show.toString()).contains("trace id    " + sent.get(poison).getTraceId());
            effects.poisoned.remove(poison);
            Operator.Run replay = operator.idem("dlq", "replay", "-b", "kafka", "-t", topic + ".DLT", "--all", "--yes");
            assertThat(replay.code()).as(replay.toString()).isZero();
            await().atMost(Duration.ofSeconds(30)).until(() -> effects.applied(poison) == 1);
            replayedUnder(failing, sent.get(poison));
        }
    }

    @Test
    void onRocketMqAMessageIsFollowedFromItsProducerThroughItsDeadLetterToItsReplay(
            RocketMqBroker rocketMq, RedisEndpoint redis, PostgresDatabase postgres, TestNames names, @TempDir Path home)
            throws Exception {
        String topic = names.topic();
        String dlq = topic + "_DLQ";
        rocketMq.createTopic(topic, 1);
        rocketMq.createTopic(dlq, 1);
        rocketMq.createRetryTopic(names.group());
        Effects effects = new Effects(redisson, names.keyPrefix(), postgres);
        effects.tracer = otel.getTracer("inventory-app");
        String good = topic + "-good";
        String poison = topic + "-poison";
        effects.poisoned.add(poison);
        Operator operator = KafkaDeadLettersIT.operator(redis, postgres, names, home, "IDEM_ROCKETMQ_NAMESRV",
                rocketMq.nameServerAddress());
        IdemRocketMqConsumer<Order> consumer = IdemRocketMqConsumer.builder(rocketMq.nameServerAddress(), names.group(),
                effects.processor().openTelemetry(otel)).subscribe(topic, "*")
                .consumeFrom(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET).build();
        try {
            consumer.start();
            Map<String, SpanContext> sent = new HashMap<>();
            DefaultMQProducer producer = new DefaultMQProducer(names.group("producer"));
            producer.setNamesrvAddr(rocketMq.nameServerAddress());
            producer.start();
            try {
                for (String id : List.of(good, poison)) {
                    Message message = new Message(topic, "eu", id, new Order(id, 1).json());
                    sent.put(id, publish(headers -> headers.forEach(message::putUserProperty)));
                    producer.send(message);
                }
            } finally {
                producer.shutdown();
            }
            await().atMost(Duration.ofSeconds(90)).until(() -> effects.compensated.size() == 1 && effects.applied(good) == 1);

            String failing = followedToTheDeadLetter("rocketmq", sent.get(good), sent.get(poison), effects);

            String entry = operator.idem("dlq", "list", "-b", "rocketmq", "-t", dlq).out().lines()
                    .filter(line -> line.contains(poison)).findFirst().orElseThrow().split("\\s+")[0];
            assertThat(operator.idem("dlq", "show", entry, "-b", "rocketmq", "-t", dlq).out())
                    .contains("trace id    " + sent.get(poison).getTraceId());
            effects.poisoned.remove(poison);
            Operator.Run replay = operator.idem("dlq", "replay", "-b", "rocketmq", "-t", dlq, "--all", "--yes");
            assertThat(replay.code()).as(replay.toString()).isZero();
            await().atMost(Duration.ofSeconds(60)).until(() -> effects.applied(poison) == 1);
            replayedUnder(failing, sent.get(poison));
        } finally {
            consumer.close();
        }
    }

    /**
     * The good message's run is a child of its producer's span and the parent of the handler's own;
     * the poison message has a failing span per attempt, and its dead letter carries the last one's
     * context, under which the dead letter's publish and the compensation ran. Returns that context.
     */
    private String followedToTheDeadLetter(String system, SpanContext good, SpanContext poison, Effects effects) {
        SpanData applied = await().atMost(Duration.ofSeconds(10)).until(() -> runs(good), runs -> runs.size() == 1).get(0);
        assertThat(applied.getTraceId()).isEqualTo(good.getTraceId());
        assertThat(applied.getParentSpanId()).isEqualTo(good.getSpanId());
        assertThat(applied.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(applied.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo(system);
        assertThat(applied.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("applied");
        SpanData handler = child(applied, "idem handler");
        assertThat(child(handler, "apply order").getTraceId()).isEqualTo(good.getTraceId());

        List<SpanData> attempts = runs(poison).stream().filter(run -> List.of("retrying", "deadlettered")
                .contains(run.getAttributes().get(AttributeKey.stringKey("idem.outcome")))).toList();
        assertThat(attempts).hasSize(5).allSatisfy(run -> {
            assertThat(run.getParentSpanId()).isEqualTo(poison.getSpanId());
            assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        });
        SpanData last = attempts.stream().filter(run -> "deadlettered".equals(
                run.getAttributes().get(AttributeKey.stringKey("idem.outcome")))).findFirst().orElseThrow();
        child(last, "idem dead letter");
        child(last, "idem compensation");
        String failing = "00-" + last.getTraceId() + "-" + last.getSpanId() + "-01";
        assertThat(effects.compensated).singleElement().satisfies(letter -> {
            assertThat(letter.traceParent()).isEqualTo(failing);
            assertThat(letter.idemHeaders()).containsEntry(DeadLetterHeaders.TRACE_PARENT, failing);
        });
        return failing;
    }

    /** The replayed run is in the original trace, under the run that dead-lettered it, and links to it. */
    private void replayedUnder(String failing, SpanContext poison) {
        String failingSpan = failing.split("-")[2];
        SpanData replayed = await().atMost(Duration.ofSeconds(10)).until(() -> runs(poison).stream()
                .filter(run -> Boolean.TRUE.equals(run.getAttributes().get(AttributeKey.booleanKey("idem.replay"))))
                .toList(), runs -> runs.size() == 1).get(0);
        assertThat(replayed.getParentSpanId()).isEqualTo(failingSpan);
        assertThat(replayed.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("applied");
        assertThat(replayed.getLinks()).anySatisfy(link -> {
            assertThat(link.getSpanContext().getSpanId()).isEqualTo(failingSpan);
            assertThat(link.getAttributes().get(AttributeKey.stringKey("idem.link"))).isEqualTo("replay-of");
        });
    }

    /** A producer's span, whose context {@code into} writes into the message's headers. */
    private SpanContext publish(java.util.function.Consumer<Map<String, String>> into) {
        Span send = otel.getTracer("shop-app").spanBuilder("orders publish").setSpanKind(SpanKind.PRODUCER).startSpan();
        Map<String, String> headers = new HashMap<>();
        otel.getPropagators().getTextMapPropagator().inject(Context.root().with(send), headers, Map::put);
        into.accept(headers);
        send.end();
        return send.getSpanContext();
    }

    private List<SpanData> runs(SpanContext producer) {
        return exporter.getFinishedSpanItems().stream()
                .filter(s -> s.getName().startsWith("process ") && s.getTraceId().equals(producer.getTraceId())).toList();
    }

    private SpanData child(SpanData parent, String name) {
        return exporter.getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals(name) && s.getParentSpanId().equals(parent.getSpanId()))
                .findFirst().orElseThrow(() -> new AssertionError("no span '" + name + "' under " + parent));
    }
}
