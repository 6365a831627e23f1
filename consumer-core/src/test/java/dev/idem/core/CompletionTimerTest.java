package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.ClaimRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A finished key's completion is sent at the latest a second after it finished, whatever the rest of
 * its batch does (a slow or hung handler in the same poll, a RocketMQ call of the same claim group):
 * in Redis-only mode a crash before the completion can repeat the effect, so the wait is bounded.
 */
class CompletionTimerTest {

    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final CountDownLatch slowMayEnd = new CountDownLatch(1);

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> {
                    if (delivery.payload().equals("slow")) {
                        slowMayEnd.await(30, TimeUnit.SECONDS);
                    }
                })
                .group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).deadLetters(letter -> { }).build();
    }

    private static Envelope envelope(String body, int offset) {
        return new Envelope("orders", 0, String.valueOf(offset), "orders-0@" + offset, 0, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private ClaimRecord.State state(String key) {
        return store.inspect(new IdempotencyKey("inventory", "orders", key)).map(ClaimRecord::state).orElse(null);
    }

    @Test
    void aFinishedKeyIsCompletedWithinASecondWhileASlowMessageOfItsBatchStillRuns() throws Exception {
        ExecutorService threads = Executors.newSingleThreadExecutor();
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope("fast", 0), envelope("slow", 1)))) {
            // Given a poll whose first message finished and whose second is still running
            assertThat(batch.process(0)).isInstanceOf(Outcome.Applied.class);
            long finished = System.nanoTime();
            threads.submit(() -> batch.process(1));

            // Then the finished key is recorded done within about a second, the batch still open
            await().atMost(Duration.ofSeconds(3)).until(() -> state("fast") == ClaimRecord.State.DONE);
            assertThat(Duration.ofNanos(System.nanoTime() - finished)).isLessThan(Duration.ofMillis(1_500));
            assertThat(state("slow")).isEqualTo(ClaimRecord.State.CLAIMED);
            slowMayEnd.countDown();
        } finally {
            slowMayEnd.countDown();
            threads.shutdown();
            assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(state("slow")).isEqualTo(ClaimRecord.State.DONE);
    }

    @Test
    void aCallerOfASharedBatchHasItsFinishedKeysCompletedWhileAnotherCallerHangs() throws Exception {
        ExecutorService threads = Executors.newSingleThreadExecutor();
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> group = processor.open(List.of(envelope("slow", 0), envelope("fast", 1)))) {
            // Given a claim group of two calls: the first hangs in its handler, the second is done
            threads.submit(() -> group.process(0));
            await().atMost(Duration.ofSeconds(3)).until(() -> state("slow") == ClaimRecord.State.CLAIMED);
            assertThat(group.process(1)).isInstanceOf(Outcome.Applied.class);
            group.release(1, 2);

            // Then the second call's key is recorded done within about a second, the group still open
            await().atMost(Duration.ofSeconds(3)).until(() -> state("fast") == ClaimRecord.State.DONE);
            assertThat(state("slow")).isEqualTo(ClaimRecord.State.CLAIMED);
            slowMayEnd.countDown();
        } finally {
            slowMayEnd.countDown();
            threads.shutdown();
            assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }
}
