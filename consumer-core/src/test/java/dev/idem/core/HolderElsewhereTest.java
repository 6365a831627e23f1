package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.ClaimRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A copy whose key another consumer holds (another process, decision 0061): it asks again for about
 * a second and a half, so a holder that finishes meanwhile answers it done; a holder that does not
 * sends it back busy for the rest of the holder's lease, as before.
 */
class HolderElsewhereTest {

    private final InMemoryClaimStore store = InMemoryClaimStore.create();
    private final List<String> handled = new CopyOnWriteArrayList<>();

    private IdempotentProcessor<String> consumer() {
        return IdempotentProcessor.<String>builder(delivery -> handled.add(delivery.payload()))
                .group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(letter -> {
                    throw new AssertionError("no dead letter expected: " + letter);
                }).build();
    }

    private static Envelope envelope(String body, int partition) {
        return new Envelope("orders", partition, "7", "orders-" + partition + "@7", 1, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aCopyWhoseKeyAnotherConsumerHoldsIsDoneWhenThatConsumerFinishesWhileItWaits() throws Exception {
        try (IdempotentProcessor<String> first = consumer(); IdempotentProcessor<String> second = consumer()) {
            Batch<String> holder = first.open(List.of(envelope("order-1", 0)));
            Batch<String> copies = second.open(List.of(envelope("order-1", 1)));
            CompletableFuture<Outcome> copy = CompletableFuture.supplyAsync(() -> copies.process(0));
            TimeUnit.MILLISECONDS.sleep(200);

            assertThat(holder.process(0)).isInstanceOf(Outcome.Applied.class);
            holder.close();

            assertThat(copy.get(5, TimeUnit.SECONDS)).as("a copy found done, not sent back for a lease")
                    .isInstanceOf(Outcome.Duplicate.class);
            copies.close();
        }
        assertThat(handled).containsExactly("order-1");
    }

    @Test
    void aCopyWhoseHolderDoesNotFinishGoesBackBusyForTheRestOfTheHoldersLease() {
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-1");
        store.claim(List.of(new ClaimRequest(key, 0)), "a-consumer-elsewhere", Duration.ofSeconds(30));
        try (IdempotentProcessor<String> consumer = consumer()) {
            long started = System.nanoTime();
            Outcome outcome = consumer.process(envelope("order-1", 1));
            Duration waited = Duration.ofNanos(System.nanoTime() - started);

            assertThat(outcome).isInstanceOfSatisfying(Outcome.Busy.class, busy ->
                    assertThat(busy.retryAfter()).isGreaterThan(Duration.ofSeconds(25)));
            assertThat(waited).as("asked again for about a second and a half")
                    .isBetween(Duration.ofMillis(1_500), Duration.ofSeconds(5));
        }
        assertThat(handled).isEmpty();
    }
}
