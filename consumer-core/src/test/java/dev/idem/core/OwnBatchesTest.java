package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Batches of one processor that overlap (a poll claimed ahead while the one before runs, concurrent
 * listener calls; decision 0047): a copy of a key an earlier batch holds is found done, not sent
 * back busy for a lease, whether that batch ended before the copy runs or ends while it waits; a
 * claim never waits for another batch (one thread may run both); and a claim taken over from a
 * crashed owner and given up unrun still counts the crashed run.
 */
class OwnBatchesTest {

    private final List<String> handled = new CopyOnWriteArrayList<>();

    private IdempotentProcessor.Builder<String> builder(ClaimStore store) {
        return IdempotentProcessor.<String>builder(delivery -> handled.add(delivery.payload()))
                .group("inventory").claims(store).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(letter -> {
                    throw new AssertionError("no dead letter expected: " + letter);
                });
    }

    private static Envelope envelope(String body, int offset) {
        return new Envelope("orders", 0, String.valueOf(offset), "orders-0@" + offset, 1, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aCopyClaimedWhileTheEarlierBatchHoldingItRunsIsADuplicateOnceThatBatchEnded() {
        try (IdempotentProcessor<String> processor = builder(InMemoryClaimStore.create()).build()) {
            Batch<String> running = processor.open(List.of(envelope("order-1", 1)));
            long started = System.nanoTime();
            try (Batch<String> ahead = processor.open(List.of(envelope("order-1", 2)))) {
                assertThat(Duration.ofNanos(System.nanoTime() - started)).as("a claim never waits for a batch")
                        .isLessThan(Duration.ofSeconds(1));
                assertThat(running.process(0)).isInstanceOf(Outcome.Applied.class);
                running.close();
                assertThat(ahead.process(0)).isInstanceOf(Outcome.Duplicate.class);
            }
        }
        assertThat(handled).containsExactly("order-1");
    }

    @Test
    void aCopyRunWhileTheEarlierBatchHoldingItStillRunsWaitsForThatBatchAndIsADuplicate() throws Exception {
        try (IdempotentProcessor<String> processor = builder(InMemoryClaimStore.create()).build()) {
            Batch<String> running = processor.open(List.of(envelope("order-1", 1)));
            Batch<String> concurrent = processor.open(List.of(envelope("order-1", 2)));
            CompletableFuture<Outcome> copy = CompletableFuture.supplyAsync(() -> concurrent.process(0));
            TimeUnit.MILLISECONDS.sleep(300);
            assertThat(copy).as("the copy waits for the batch holding its key").isNotDone();

            assertThat(running.process(0)).isInstanceOf(Outcome.Applied.class);
            running.close();
            assertThat(copy.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Duplicate.class);
            concurrent.close();
        }
        assertThat(handled).containsExactly("order-1");
    }

    @Test
    void aCopyMetBusyIsAnsweredDoneFromTheCompletionHereThatConfirmedItWithoutAskingTheStoreAgain() throws Exception {
        InMemoryClaimStore memory = InMemoryClaimStore.create();
        Map<String, Integer> claims = new ConcurrentHashMap<>();
        try (IdempotentProcessor<String> processor = builder(ClaimCounts.counting(memory, claims)).build()) {
            // The holder ends before the copy runs (a poll claimed ahead)...
            Batch<String> running = processor.open(List.of(envelope("order-1", 1)));
            try (Batch<String> ahead = processor.open(List.of(envelope("order-1", 2)))) {
                assertThat(running.process(0)).isInstanceOf(Outcome.Applied.class);
                running.close();
                assertThat(ahead.process(0)).isInstanceOf(Outcome.Duplicate.class);
            }
            // ...or while the copy waits for it (a concurrent listener call).
            Batch<String> holder = processor.open(List.of(envelope("order-2", 3)));
            Batch<String> concurrent = processor.open(List.of(envelope("order-2", 4)));
            CompletableFuture<Outcome> copy = CompletableFuture.supplyAsync(() -> concurrent.process(0));
            TimeUnit.MILLISECONDS.sleep(300);
            assertThat(holder.process(0)).isInstanceOf(Outcome.Applied.class);
            holder.close();
            assertThat(copy.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Duplicate.class);
            concurrent.close();
        }
        assertThat(handled).containsExactly("order-1", "order-2");
        // The holder's claim and the copy's batch claim; not asked again when the copy ran.
        assertThat(claims).containsEntry("order-1", 2);
        // The copy asks once when it runs (the holder still held it), then is answered from the completion.
        assertThat(claims).containsEntry("order-2", 3);
    }

    @Test
    void aCopyWhoseHoldersCompletionWasRefusedAsksTheStoreAgain() {
        InMemoryClaimStore memory = InMemoryClaimStore.create();
        Map<String, Integer> claims = new ConcurrentHashMap<>();
        try (IdempotentProcessor<String> processor = builder(ClaimCounts.counting(memory, claims)).build()) {
            Batch<String> running = processor.open(List.of(envelope("order-1", 1)));
            try (Batch<String> ahead = processor.open(List.of(envelope("order-1", 2)))) {
                assertThat(running.process(0)).isInstanceOf(Outcome.Applied.class);
                // An operator resets the key before the holder's completion: it is refused, and the
                // copy runs as the reset asked.
                memory.reset(new IdempotencyKey("inventory", "orders", "order-1"));
                running.close();
                assertThat(ahead.process(0)).isInstanceOf(Outcome.Applied.class);
            }
        }
        assertThat(handled).containsExactly("order-1", "order-1");
        assertThat(claims).containsEntry("order-1", 3);
    }

    @Test
    void aBatchThatBeganWatchingAKeyAfterItWasConfirmedWaitsForItsCurrentHolder() throws Exception {
        InMemoryClaimStore memory = InMemoryClaimStore.create();
        try (IdempotentProcessor<String> processor = builder(memory).build()) {
            // A batch hears that the key was done while it watched it...
            Batch<String> first = processor.open(List.of(envelope("order-1", 1)));
            Batch<String> watching = processor.open(List.of(envelope("order-1", 2)));
            assertThat(first.process(0)).isInstanceOf(Outcome.Applied.class);
            first.close();
            // ...then an operator resets it, a batch claims it afresh, and a later one meets it busy.
            memory.reset(new IdempotencyKey("inventory", "orders", "order-1"));
            Batch<String> again = processor.open(List.of(envelope("order-1", 3)));
            Batch<String> later = processor.open(List.of(envelope("order-1", 4)));
            CompletableFuture<Outcome> copy = CompletableFuture.supplyAsync(() -> later.process(0));
            TimeUnit.MILLISECONDS.sleep(300);
            assertThat(copy).as("the later batch waits for the key's holder, not for an old confirmation").isNotDone();

            assertThat(again.process(0)).isInstanceOf(Outcome.Applied.class);
            again.close();
            assertThat(copy.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Duplicate.class);
            later.close();
            assertThat(watching.process(0)).isInstanceOf(Outcome.Duplicate.class);
            watching.close();
        }
        assertThat(handled).containsExactly("order-1", "order-1");
    }

    @Test
    void batchesOpenedAndRunOnOneThreadNeverWaitForEachOther() throws Exception {
        // A share consumer with one worker: the next poll's claim is queued before this poll's records.
        ExecutorService one = Executors.newSingleThreadExecutor();
        try (IdempotentProcessor<String> processor = builder(InMemoryClaimStore.create()).build()) {
            long started = System.nanoTime();
            Future<Batch<String>> first = one.submit(() -> processor.open(List.of(envelope("order-1", 1))));
            Future<Batch<String>> second = one.submit(() -> processor.open(List.of(envelope("order-1", 2))));
            Future<Outcome> applied = one.submit(() -> {
                Batch<String> batch = first.get();
                Outcome outcome = batch.process(0);
                batch.close();
                return outcome;
            });
            Future<Outcome> copy = one.submit(() -> {
                try (Batch<String> batch = second.get()) {
                    return batch.process(0);
                }
            });
            assertThat(applied.get(10, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
            assertThat(copy.get(10, TimeUnit.SECONDS)).isInstanceOf(Outcome.Duplicate.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
        } finally {
            one.shutdownNow();
        }
        assertThat(handled).containsExactly("order-1");
    }

    @Test
    void aClaimTakenOverFromACrashedOwnerAndGivenUpUnrunIsLeftForTheNextOwnerToTakeOverAndCount() {
        MutableClock clock = new MutableClock();
        InMemoryClaimStore store = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
        IdempotencyKey key = new IdempotencyKey("inventory", "orders", "order-1");
        // A consumer claimed it, started the handler and died: its lease runs out.
        store.claim(List.of(new ClaimRequest(key, 1)), "crashed", Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(31));

        try (IdempotentProcessor<String> processor = builder(store).build()) {
            // A poll claimed ahead takes it over, then is given up before it runs (a rebalance).
            processor.open(List.of(envelope("order-1", 1))).close();
        }

        Claim next = store.claim(List.of(new ClaimRequest(key, 1)), "next", Duration.ofSeconds(30)).get(0);
        assertThat(next).isInstanceOf(Claim.Claimed.class);
        assertThat(((Claim.Claimed) next).takenOverFromCrash()).as("still a takeover: counted before it runs").isTrue();
        assertThat(store.count(key, "next", Duration.ofSeconds(30))).isTrue();
        assertThat(store.inspect(key).orElseThrow().attempts()).as("one count, for the run about to start").isEqualTo(1);
        assertThat(handled).isEmpty();
    }

    /** A clock the test moves. */
    private static final class MutableClock extends Clock {
        private volatile Instant now = Instant.parse("2026-11-27T10:00:00Z");

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
