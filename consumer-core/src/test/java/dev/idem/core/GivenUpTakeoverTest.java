package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.memory.ManualClock;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A claim taken over from a crashed owner and given up unrun (a poll claimed ahead, then a
 * rebalance) is left abandoned for the next owner to count: attempts count handler runs, so a record
 * that never ran is never charged for the deaths of consumers that only held it, and a message that
 * crashes every run still reaches its dead letter after as many runs as without the give-ups.
 */
class GivenUpTakeoverTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final int MAX_ATTEMPTS = 5;
    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-27T10:00:00Z"));
    private final InMemoryClaimStore memory = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
    private final AtomicBoolean storeFailsReleasing = new AtomicBoolean();
    private final AtomicBoolean storeFailsCounting = new AtomicBoolean();
    private final AtomicBoolean storeReleaseBreaks = new AtomicBoolean();
    private final AtomicBoolean countReplyLost = new AtomicBoolean();
    private final IdempotencyKey key = new IdempotencyKey("inventory", "orders", "k");

    /** The in-memory store, whose releases or counts fail while asked to. */
    private ClaimStore store() {
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("count") && countReplyLost.get()) {
                        method.invoke(memory, args);
                        throw new ClaimStoreException("Redis timed out after running the count (test)", null);
                    }
                    if (method.getName().equals("release") && storeReleaseBreaks.get()) {
                        throw new IllegalStateException("a defect in a custom store (test)");
                    }
                    if (method.getName().equals("release") && storeFailsReleasing.get()
                            || method.getName().equals("count") && storeFailsCounting.get()) {
                        throw new ClaimStoreException("Redis timed out (test)", null);
                    }
                    try {
                        return method.invoke(memory, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private final RecordingPublisher deadLetters = new RecordingPublisher();
    private final List<Integer> attemptsSeen = new ArrayList<>();
    private final AtomicBoolean handlerCrashes = new AtomicBoolean();

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> {
                    attemptsSeen.add(delivery.attempt());
                    if (handlerCrashes.get()) {
                        throw new OutOfMemoryError("the process dies (test)");
                    }
                })
                .group("inventory").claims(store()).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).deadLetters(deadLetters)
                .maxAttempts(MAX_ATTEMPTS).lease(LEASE).clock(clock).build();
    }

    private static Envelope envelope() {
        return new Envelope("orders", 0, "0", "orders-0@0", 1, Map.of(), "k".getBytes(StandardCharsets.UTF_8));
    }

    /** A consumer that held the key in a poll it never began, then died (its lease ends). */
    private void heldAndDied() {
        IdempotentProcessor<String> processor = processor();
        assertThat(processor.open(List.of(envelope())).size()).isEqualTo(1);   // never run, never closed
        clock.advance(LEASE.plusSeconds(1));
    }

    /** A consumer that claimed the key in a poll claimed ahead and gave it up unrun (a rebalance). */
    private void givenUpUnrun() {
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope()))) {
            assertThat(batch.size()).isEqualTo(1);   // closed without running its message
        }
    }

    /** A consumer that runs the key; a crashing handler kills it (its lease ends). */
    private Outcome run() {
        IdempotentProcessor<String> processor = processor();
        Batch<String> batch = processor.open(List.of(envelope()));
        try {
            Outcome outcome = batch.process(0);
            batch.close();
            processor.close();
            return outcome;
        } catch (OutOfMemoryError crash) {
            clock.advance(LEASE.plusSeconds(1));
            return null;
        }
    }

    private int attempts() {
        return memory.inspect(key).map(ClaimRecord::attempts).orElseThrow();
    }

    private void crashedRun(String owner) {
        assertThat(memory.claim(List.of(new ClaimRequest(key, 0)), owner, LEASE).get(0)).isInstanceOf(Claim.Claimed.class);
        clock.advance(LEASE.plusSeconds(1));   // the owner died in its handler; its lease ends
    }

    @Test
    void aRecordOnlyHeldByDyingConsumersRunsFirstAsAttemptOne() {
        // Given a record claimed ahead by consumers that died or gave it up, five times, never run
        for (int death = 0; death < MAX_ATTEMPTS; death++) {
            heldAndDied();
            givenUpUnrun();
        }

        // When it finally runs
        Outcome outcome = run();

        // Then it runs once, as its first attempt, and is applied: no dead letter, no compensation
        assertThat(outcome).isInstanceOf(Outcome.Applied.class);
        assertThat(attemptsSeen).containsExactly(1);
        assertThat(deadLetters.published()).isEmpty();
    }

    @Test
    void aMessageCrashingEveryRunReachesItsDeadLetterAfterAsManyRunsWhenEveryTakeoverIsGivenUpOnce() {
        // Given a handler that kills the process every time, and a consumer that takes the key over
        // and gives it up unrun after every crash
        handlerCrashes.set(true);
        Outcome outcome = null;
        int runs = 0;
        for (int cycle = 0; cycle < 3 * MAX_ATTEMPTS && outcome == null; cycle++) {
            int before = attemptsSeen.size();
            outcome = run();
            runs += attemptsSeen.size() - before;
            if (outcome == null) {
                givenUpUnrun();
            }
        }

        // Then it is dead-lettered without running again after maxAttempts + 1 runs (decision 0003:
        // the first crash is not counted), the same as with no give-ups
        assertThat(outcome).isInstanceOf(Outcome.DeadLettered.class);
        assertThat(runs).isEqualTo(MAX_ATTEMPTS + 1);
        assertThat(deadLetters.published()).hasSize(1);
    }

    @Test
    void aStoreWhoseReleaseThrowsSomethingElseStillLetsTheBatchClose() {
        // Given a store whose release throws what it should not (a custom store's defect)
        storeReleaseBreaks.set(true);
        IdempotencyKey finished = new IdempotencyKey("inventory", "orders", "done");

        // When a batch closes with one message run and one never started
        try (IdempotentProcessor<String> processor = processor()) {
            Batch<String> batch = processor.open(List.of(
                    new Envelope("orders", 0, "1", "orders-0@1", 1, Map.of(), "done".getBytes(StandardCharsets.UTF_8)),
                    envelope()));
            assertThat(batch.process(0)).isInstanceOf(Outcome.Applied.class);
            batch.close();
        }

        // Then the close returned, and the finished key is recorded done
        assertThat(memory.inspect(finished).map(ClaimRecord::state)).contains(ClaimRecord.State.DONE);
    }

    @Test
    void aCrashedRunIsCountedOnceWhenTheReleaseOfItsTakeoverFails() {
        // Given a run that crashed, and a takeover of it given up unrun whose release fails
        crashedRun("crashed");
        storeFailsReleasing.set(true);
        givenUpUnrun();
        storeFailsReleasing.set(false);
        clock.advance(LEASE.plusSeconds(1));   // the unreleased takeover's lease ends

        // When the next owner takes the key over and counts before its handler
        Claim next = memory.claim(List.of(new ClaimRequest(key, 0)), "next", LEASE).get(0);
        assertThat(((Claim.Claimed) next).abandoned()).isTrue();
        memory.count(key, "next", LEASE);

        // Then one count, for the one run that is about to start
        assertThat(attempts()).isEqualTo(1);
    }

    @Test
    void aTakeoverWhoseCountBeforeItsHandlerFailsIsHandedBackForTheNextOwnerToCount() {
        // Given a run that crashed, taken over by a batch whose count before the handler fails
        crashedRun("crashed");
        storeFailsCounting.set(true);

        // When the message runs: deferred, its claim handed back
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope()))) {
            assertThat(batch.process(0)).isInstanceOf(Outcome.Deferred.class);
        }
        assertThat(attemptsSeen).isEmpty();

        // Then the crash is not erased: the next claim is still a takeover, counted before it runs
        Claim.Claimed next = (Claim.Claimed) memory.claim(List.of(new ClaimRequest(key, 0)), "next", LEASE).get(0);
        assertThat(next.abandoned()).isTrue();
        assertThat(next.fresh()).isFalse();
    }

    @Test
    void aCountWhoseReplyWasLostIsTakenBackWhenTheClaimIsHandedBack() {
        // Given a run that crashed, taken over by a batch whose count before the handler runs in the
        // store but whose reply is lost (a timeout)
        crashedRun("crashed");
        countReplyLost.set(true);
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(envelope()))) {
            assertThat(batch.process(0)).isInstanceOf(Outcome.Deferred.class);
        }
        countReplyLost.set(false);

        // Then no run is counted for it: the next owner takes it over and counts only its own run
        assertThat(attempts()).isZero();
        Claim.Claimed next = (Claim.Claimed) memory.claim(List.of(new ClaimRequest(key, 0)), "next", LEASE).get(0);
        assertThat(next.takenOverFromCrash()).isTrue();
        memory.count(key, "next", LEASE);
        assertThat(attempts()).isEqualTo(1);
    }
}
