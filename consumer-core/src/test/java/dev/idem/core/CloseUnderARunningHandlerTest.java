package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A processor closed while one of its handlers still runs (a wrapped container stopped before the
 * handler returned, past its grace) keeps that handler's lease renewed until it returns: in
 * Redis-only mode a lease left to lapse would let another owner run the key at the same time.
 */
class CloseUnderARunningHandlerTest {

    private static final Duration LEASE = Duration.ofMillis(300);

    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final CountDownLatch running = new CountDownLatch(1);
    private final CountDownLatch mayReturn = new CountDownLatch(1);

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> {
                    running.countDown();
                    mayReturn.await(10, TimeUnit.SECONDS);
                })
                .group("inventory").claims(store).dedupCheck(DedupCheck.none()).lease(LEASE)
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).deadLetters(letter -> { }).build();
    }

    @Test
    void aHandlerStillRunningWhenItsProcessorClosesKeepsItsLeaseUntilItReturns() throws Exception {
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-1");
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            // Given a handler running in an open batch
            IdempotentProcessor<String> processor = processor();
            Batch<String> batch = processor.open(List.of(new Envelope("orders", 0, "1", "orders-0@1", 0, Map.of(),
                    "order-1".getBytes(StandardCharsets.UTF_8))));
            Future<Outcome> outcome = thread.submit(() -> batch.process(0));
            assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();

            // When its processor closes (the container's grace ran out)
            processor.close();

            // Then for many leases no other owner can claim the key while the handler runs
            await().during(LEASE.multipliedBy(5)).atMost(LEASE.multipliedBy(8)).pollInterval(Duration.ofMillis(50))
                    .until(() -> store.claim(List.of(new ClaimRequest(key, 0)), "another", LEASE).get(0)
                            instanceof Claim.Busy);

            // And once it returns, its effect is recorded done
            mayReturn.countDown();
            assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
            await().atMost(Duration.ofSeconds(3))
                    .until(() -> store.inspect(key).map(ClaimRecord::state).orElse(null) == ClaimRecord.State.DONE);
            batch.close();
        } finally {
            mayReturn.countDown();
            thread.shutdownNow();
        }
    }
}
