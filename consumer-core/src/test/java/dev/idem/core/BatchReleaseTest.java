package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A batch shared by several callers, each processing its own messages ({@link Batch#release}): a
 * caller done with its messages releases those it never started at once, while the batch stays open
 * for the others, and a copy of a released key elsewhere in the batch does not run under the claim
 * given up.
 */
class BatchReleaseTest {

    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final List<String> handled = new CopyOnWriteArrayList<>();

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> handled.add(delivery.payload()))
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
