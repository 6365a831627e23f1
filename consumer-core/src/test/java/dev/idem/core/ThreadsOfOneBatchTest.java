package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A batch run by several threads (a poll's partitions, RocketMQ calls claimed together): a copy of a
 * key running on another thread waits for it and is its duplicate, not sent back busy; a caller done
 * with its messages releases those it never started while the batch stays open ({@link Batch#release}),
 * and a copy of a released key does not run under the claim given up; and a processor closing while
 * a batch is still open (a handler outlived the consumer's grace) records what the batch finished as done.
 */
class ThreadsOfOneBatchTest {

    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final List<String> handled = new CopyOnWriteArrayList<>();
    private final CountDownLatch slowMayEnd = new CountDownLatch(1);

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> {
                    handled.add(delivery.payload());
                    if (delivery.payload().equals("slow")) {
                        slowMayEnd.await(10, TimeUnit.SECONDS);
                    }
                })
                .group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).deadLetters(letter -> { }).build();
    }

    private static Envelope envelope(String body, int offset) {
        return new Envelope("orders", 0, String.valueOf(offset), "orders-0@" + offset, 1, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private ClaimRecord.State state(String key) {
        return store.inspect(new IdempotencyKey("inventory", "orders", key)).map(ClaimRecord::state).orElse(null);
    }

    @Test
    void aCopyOfAKeyRunningOnAnotherThreadWaitsForItAndIsADuplicate() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope("slow", 0), envelope("slow", 1)))) {
            // Given one caller running a key's handler
            Future<Outcome> first = threads.submit(() -> batch.process(0));
            await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains("slow"));

            // When another caller of the batch reaches a copy of it
            Future<Outcome> copy = threads.submit(() -> batch.process(1));

            // Then the copy waits for the first run instead of coming back busy, and is its duplicate
            await().during(Duration.ofMillis(300)).atMost(Duration.ofMillis(800))
                    .until(() -> !copy.isDone());
            slowMayEnd.countDown();
            assertThat(first.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
            assertThat(copy.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Duplicate.class);
            assertThat(handled).containsExactly("slow");
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aProcessorClosingWhileABatchRunsRecordsWhatTheBatchFinished() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(1);
        IdempotentProcessor<String> processor = processor();
        try {
            Batch<String> batch = processor.open(List.of(envelope("quick", 0), envelope("slow", 1)));
            // Given a batch that finished one message while another still runs on another thread
            assertThat(batch.process(0)).isInstanceOf(Outcome.Applied.class);
            Future<Outcome> slow = threads.submit(() -> batch.process(1));
            await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains("slow"));

            // When the processor closes before the batch does
            processor.close();

            // Then the finished message is recorded as done: a copy elsewhere does not run it again
            assertThat(state("quick")).isEqualTo(ClaimRecord.State.DONE);
            slowMayEnd.countDown();
            slow.get(5, TimeUnit.SECONDS);
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void messagesACallerNeverStartedAreReleasedAtOnceAndTheirCopiesInTheBatchDoNotRun() {
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope("a", 0), envelope("b", 1), envelope("c", 2),
                     envelope("b", 3)))) {
            // Given a caller of messages 0..2 that ran only the first
            assertThat(batch.process(0)).isInstanceOf(Outcome.Applied.class);

            // When it is done with them
            batch.release(0, 3);

            // Then the messages it never started are free for their redelivery, the batch still open
            assertThat(state("b")).isNotEqualTo(ClaimRecord.State.CLAIMED);
            assertThat(state("c")).isNotEqualTo(ClaimRecord.State.CLAIMED);
            assertThat(store.claim(List.of(new ClaimRequest(new IdempotencyKey("inventory", "orders", "b"), 0)),
                    "another-instance", Duration.ofSeconds(30)).get(0)).isInstanceOf(Claim.Claimed.class);
            // And the one it ran stays held until the batch completes it
            assertThat(state("a")).isEqualTo(ClaimRecord.State.CLAIMED);
            // And another caller's copy of a released key is Busy, not run under the claim given up
            assertThat(batch.process(3)).isInstanceOf(Outcome.Busy.class);
            assertThat(handled).containsExactly("a");
        }
        assertThat(state("a")).isEqualTo(ClaimRecord.State.DONE);
        assertThat(state("b")).as("the other instance's claim is left alone").isEqualTo(ClaimRecord.State.CLAIMED);
    }

    @Test
    void aRangeOutsideTheBatchIsRefused() {
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope("a", 0)))) {
            assertThatThrownBy(() -> batch.release(0, 2)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }
}
