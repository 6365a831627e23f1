package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A batch that closes before the message of a compensation it took over ran (a rebalance, the
 * redelivery of an earlier message) gives the compensation up: the next delivery takes it over at
 * once, not after the batch's lease.
 */
class UnstartedCompensationTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final IdempotencyKey key = new IdempotencyKey("inventory", "orders", "k");

    private Claim claim(String owner) {
        return store.claim(List.of(new ClaimRequest(key, 0)), owner, LEASE).get(0);
    }

    @Test
    void aBatchClosingBeforeACompensationRanGivesItUpAtOnce() {
        // Given a dead key whose compensation was cut off by a crash (its lease ran out)
        claim("crashed");
        store.doom(key, "crashed", "attempts exhausted", "boom");
        store.deadLetter(key, "crashed", Duration.ofMillis(50));
        await().atMost(Duration.ofSeconds(5)).until(() -> !(claim("probe") instanceof Claim.Busy));
        // (the probe took the compensation over: let it lapse for the batch below)
        store.release(List.of(key), "probe");

        try (IdempotentProcessor<String> processor = IdempotentProcessor.<String>builder(delivery -> { })
                .group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).deadLetters(letter -> { }).build()) {
            // When a batch takes the compensation over and closes before its message runs
            try (Batch<String> batch = processor.open(List.of(new Envelope("orders", 0, "0", "orders-0@0", 1,
                    Map.of(), "k".getBytes(StandardCharsets.UTF_8))))) {
                assertThat(claim("another")).as("held by the open batch").isInstanceOf(Claim.Busy.class);
            }

            // Then the next delivery takes the compensation over at once
            assertThat(claim("next")).isInstanceOf(Claim.Compensate.class);
        }
    }
}
