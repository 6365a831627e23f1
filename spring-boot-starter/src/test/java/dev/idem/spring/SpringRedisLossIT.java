package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.spring.app.Effects;
import dev.idem.spring.app.OrdersApp;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.KafkaBroker;
import dev.idem.testkit.PostgresDatabase;
import dev.idem.testkit.RedisEndpoint;
import dev.idem.testkit.TestNames;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Redis loses every key between two copies of each order. The guarded listener (the ledger in the
 * application's transaction is its business check) applies each order once; its unguarded twin
 * ({@code ledger = false}, Redis-only) applies each twice: the test's oracle can fail. Then one
 * listener's consumer stops, and the health contributor turns DOWN naming it.
 */
@IdemTestKit
class SpringRedisLossIT {

    private static final int IDS = 10;

    @Test
    void theLedgerKeepsOneEffectWhenRedisLosesItsKeysAndTheUnguardedTwinDoesNot(KafkaBroker kafka, RedisEndpoint redis,
                                                                               PostgresDatabase db, TestNames names)
            throws Exception {
        String guarded = names.topic("g");
        String unguarded = names.topic("u");
        kafka.createTopic(guarded, 3);
        kafka.createTopic(unguarded, 3);
        String table = Fixtures.effectTable(db, names, "loss");
        Map<String, Object> props = new HashMap<>();
        props.put("idem.redis.url", redis.uri().toString());
        props.put("idem.redis.key-prefix", names.keyPrefix());
        props.put("idem.kafka.bootstrap.servers", kafka.bootstrapServers());
        props.put("idem.ledger.table", table + "_ledger");
        props.put("idem.ledger.create-table", "true");
        props.put("spring.datasource.url", db.jdbcUrl());
        props.put("spring.datasource.username", db.user());
        props.put("spring.datasource.password", db.password());
        props.put("test.topic", guarded);
        props.put("test.unguarded.topic", unguarded);
        props.put("test.group", names.group());
        props.put("test.table", table);

        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(OrdersApp.class)
                .web(WebApplicationType.NONE).properties(props).run()) {
            sendEveryOrder(kafka, guarded, unguarded);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300))
                    .untilAsserted(() -> assertThat(Fixtures.rows(db, table)).hasSize(2 * IDS));

            app.getBean(RedissonClient.class).getKeys().deleteByPattern(names.keyPrefix() + "*");
            sendEveryOrder(kafka, guarded, unguarded);

            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).untilAsserted(() ->
                    assertThat(Fixtures.rows(db, table).entrySet()).filteredOn(e -> e.getKey().startsWith("unguarded:"))
                            .allMatch(e -> e.getValue() == 2));
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> {
                        Map<String, Integer> rows = Fixtures.rows(db, table);
                        for (int i = 0; i < IDS; i++) {
                            assertThat(rows.get("lost-" + i)).as("guarded effects of lost-" + i).isEqualTo(1);
                            assertThat(rows.get("unguarded:lost-" + i)).as("unguarded effects of lost-" + i)
                                    .isEqualTo(2);
                        }
                    });
            for (int i = 0; i < IDS; i++) {
                assertThat(Effects.calls("lost-" + i)).as("guarded handler calls: the ledger found the effect")
                        .isEqualTo(1);
            }

            IdemHealthIndicator health = app.getBean(IdemHealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            app.getBean(IdemListenerContainer.class).listeners().stream()
                    .filter(listener -> listener.name().equals("unguarded")).findFirst().orElseThrow()
                    .consumer().close();
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(String.valueOf(down.getDetails().get("unguarded"))).startsWith("DOWN: consumer");
            assertThat(down.getDetails().get("orders")).isEqualTo("UP");
        }
    }

    private static void sendEveryOrder(KafkaBroker kafka, String guarded, String unguarded) throws Exception {
        try (KafkaProducer<String, String> producer = Fixtures.producer(kafka)) {
            for (int i = 0; i < IDS; i++) {
                String value = "{\"id\":\"lost-" + i + "\",\"kind\":\"ok\"}";
                producer.send(new ProducerRecord<>(guarded, i % 3, "lost-" + i, value)).get();
                producer.send(new ProducerRecord<>(unguarded, i % 3, "lost-" + i, value)).get();
            }
        }
    }
}
