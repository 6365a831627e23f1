package dev.idem.kafka;

import dev.idem.core.ConsumerState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.DedupCheck;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.KeySource;
import dev.idem.core.PayloadCodec;
import dev.idem.core.memory.InMemoryClaimStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What a health check sees of a consumer that cannot reach its broker. */
class IdemKafkaConsumerHealthTest {

    @Test
    void anUnreachableBootstrapServerIsReportedAfterTheJoinTimeoutAndTheConsumerKeepsTrying() {
        List<Throwable> heard = new CopyOnWriteArrayList<>();
        IdempotentProcessor.Builder<String> processor = IdempotentProcessor.<String>builder(d -> { })
                .claims(InMemoryClaimStore.create()).dedupCheck(DedupCheck.none()).codec(PayloadCodec.utf8())
                .keys(KeySource.messageId());
        IdemKafkaConsumer<String> consumer = IdemKafkaConsumer.builder(Map.of("bootstrap.servers",
                        "127.0.0.1:1", "group.id", "inventory"), processor)
                .topics("orders").joinTimeout(Duration.ofSeconds(1)).onFailure(heard::add).build();
        try {
            assertThat(consumer.state()).isEqualTo(ConsumerState.NEW);
            consumer.start();

            await().atMost(Duration.ofSeconds(20)).until(() -> consumer.failure() != null);

            assertThat(consumer.failure()).hasMessageContaining("bootstrap.servers=127.0.0.1:1");
            assertThat(heard).containsExactly(consumer.failure());
            assertThat(consumer.state()).isEqualTo(ConsumerState.STARTING);
        } finally {
            consumer.close();
        }
        assertThat(consumer.state()).isEqualTo(ConsumerState.STOPPED);
    }
}
