package dev.idem.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.outbox.OutboxHeaders;
import dev.idem.core.outbox.OutboxPublisher;
import dev.idem.core.outbox.OutboxRecord;
import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RocketMqBroker;
import dev.idem.testkit.TestNames;
import dev.idem.testkit.TopicMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Outbox rows published to the test kit's RocketMQ broker: ids, keys, order per key, poison. */
@IdemTestKit
class RocketMqOutboxPublisherIT {

    private static final String TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    @Test
    void rowsArePublishedWithTheirIdsInOrderPerKeyAndAnIllegalOneIsPoison(RocketMqBroker rocketMq, TestNames names)
            throws Exception {
        String topic = names.topic().replace('.', '_');
        rocketMq.createTopic(topic, 4);
        List<OutboxRecord> records = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            records.add(record(i, topic, "sku-" + (i % 3), Integer.toString(i)));
        }
        records.add(new OutboxRecord(30, "id-30", topic, "sku-0", null, Map.of(), null, Instant.now(), 0));

        List<OutboxPublisher.Result> results;
        try (RocketMqOutboxPublisher publisher = RocketMqOutboxPublisher.builder(rocketMq.nameServerAddress())
                .timeout(Duration.ofSeconds(10)).build()) {
            results = publisher.publish(records);
        }

        assertThat(results.subList(0, 30)).containsOnly(OutboxPublisher.Published.INSTANCE);
        assertThat(results.get(30)).isInstanceOf(OutboxPublisher.Poison.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> rocketMq.read(topic).size() == 30);
        List<TopicMessage> published = rocketMq.read(topic);
        for (int k = 0; k < 3; k++) {
            String key = "sku-" + k;
            List<TopicMessage> ofKey = published.stream().filter(m -> key.equals(m.keyText())).toList();
            assertThat(ofKey).as(key).hasSize(10);
            assertThat(ofKey.stream().map(m -> Integer.parseInt(m.text())).toList()).as(key).isSorted();
        }
        TopicMessage first = published.stream().filter(m -> "0".equals(m.text())).findFirst().orElseThrow();
        assertThat(first.header(OutboxHeaders.MESSAGE_ID)).isEqualTo("id-0");
        assertThat(first.header(OutboxHeaders.TRACE_PARENT)).isEqualTo(TRACE);
        assertThat(first.header("type")).isEqualTo("StockMoved");
    }

    @Test
    void aTopicTheNameServerDoesNotKnowIsDeadAfterItsGrace(RocketMqBroker rocketMq, TestNames names) throws Exception {
        // The test kit's broker creates topics on first use, as RocketMQ's default does: a send to a new
        // topic is published, not dead.
        String topic = names.topic().replace('.', '_') + "_new";
        try (RocketMqOutboxPublisher publisher = RocketMqOutboxPublisher.builder(rocketMq.nameServerAddress())
                .missingTopicGrace(Duration.ZERO).build()) {
            assertThat(publisher.publish(List.of(record(1, topic, "k", "v"))))
                    .containsExactly(OutboxPublisher.Published.INSTANCE);
        }
    }

    private static OutboxRecord record(long position, String topic, String key, String value) {
        return new OutboxRecord(position, "id-" + position, topic, key, value.getBytes(StandardCharsets.UTF_8),
                Map.of("type", "StockMoved"), TRACE, Instant.now(), 0);
    }
}
