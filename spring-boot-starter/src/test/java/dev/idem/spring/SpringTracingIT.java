package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.spring.app.OrdersApp;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An application with Spring Boot's OpenTelemetry starter and no Idem-specific tracing code: its
 * Idem listener's runs are spans under the producer's, with the handler's span below.
 */
@IdemTestKit
class SpringTracingIT {

    private static final String PRODUCER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PRODUCER_SPAN = "00f067aa0ba902b7";

    /** Where the application's tracing exports: what a user configures for their backend. */
    @Configuration(proxyBeanMethods = false)
    static class Exporter {
        @Bean
        InMemorySpanExporter spanExporter() {
            return InMemorySpanExporter.create();
        }
    }

    @Test
    void anIdemListenersRunsAreSpansUnderTheProducersWithNoTracingCodeInTheApplication(
            KafkaBroker kafka, RedisEndpoint redis, PostgresDatabase db, TestNames names) throws Exception {
        String topic = names.topic();
        kafka.createTopic(topic, 1);
        kafka.createTopic(names.topic("u"), 1);
        String table = Fixtures.effectTable(db, names, "traced");
        Map<String, Object> props = new HashMap<>();
        props.put("idem.redis.url", redis.uri().toString());
        props.put("idem.redis.key-prefix", names.keyPrefix());
        props.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        props.put("idem.ledger.table", table + "_ledger");
        props.put("idem.ledger.create-table", "true");
        props.put("spring.datasource.url", db.jdbcUrl());
        props.put("spring.datasource.username", db.user());
        props.put("spring.datasource.password", db.password());
        props.put("management.tracing.sampling.probability", "1.0");
        props.put("test.topic", topic);
        props.put("test.unguarded.topic", names.topic("u"));
        props.put("test.group", names.group());
        props.put("test.table", table);

        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(OrdersApp.class, Exporter.class)
                .web(WebApplicationType.NONE).properties(props).run()) {
            try (KafkaProducer<String, String> producer = Fixtures.producer(kafka)) {
                ProducerRecord<String, String> record = new ProducerRecord<>(topic, 0, "traced-1",
                        "{\"id\":\"traced-1\",\"kind\":\"ok\"}");
                record.headers().add("traceparent", ("00-" + PRODUCER_TRACE + "-" + PRODUCER_SPAN + "-01")
                        .getBytes(StandardCharsets.UTF_8));
                producer.send(record).get();
            }
            InMemorySpanExporter exporter = app.getBean(InMemorySpanExporter.class);
            SpanData run = await().atMost(Duration.ofSeconds(60)).until(() -> exporter.getFinishedSpanItems().stream()
                    .filter(s -> s.getName().equals("process " + topic)).toList(), runs -> runs.size() == 1).get(0);

            assertThat(run.getTraceId()).isEqualTo(PRODUCER_TRACE);
            assertThat(run.getParentSpanId()).isEqualTo(PRODUCER_SPAN);
            assertThat(run.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo("kafka");
            assertThat(run.getAttributes().get(AttributeKey.stringKey("messaging.consumer.group.name")))
                    .isEqualTo(names.group());
            assertThat(run.getAttributes().get(AttributeKey.stringKey("idem.outcome"))).isEqualTo("applied");
            List<SpanData> handler = await().atMost(Duration.ofSeconds(10)).until(() -> exporter.getFinishedSpanItems()
                    .stream().filter(s -> s.getName().equals("idem handler") && s.getParentSpanId().equals(run.getSpanId()))
                    .toList(), spans -> spans.size() == 1);
            assertThat(handler.get(0).getTraceId()).isEqualTo(PRODUCER_TRACE);
        }
    }
}
