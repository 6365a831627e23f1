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
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A claim taken over from a crashed owner and given up unrun (a poll claimed ahead, then a
 * rebalance) counts that crash, and counts it once even when the store fails to take it back: the
 * count and the release are one step.
 */
class GivenUpTakeoverTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-27T10:00:00Z"));
    private final InMemoryClaimStore memory = new InMemoryClaimStore(clock, Duration.ofDays(7), Duration.ofDays(1));
    private final AtomicBoolean storeFailsReleasing = new AtomicBoolean();
    private final AtomicBoolean storeFailsCounting = new AtomicBoolean();
    private final IdempotencyKey key = new IdempotencyKey("inventory", "orders", "k");

    /** The in-memory store, whose releases or counts fail while asked to. */
    private ClaimStore store() {
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
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

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> { })
                .group("inventory").claims(store()).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p)).deadLetters(letter -> { })
                .lease(LEASE).clock(clock).build();
    }

    private void givenUpUnrun() {
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(new Envelope("orders", 0, "0", "orders-0@0", 1, Map.of(),
                     "k".getBytes(StandardCharsets.UTF_8))))) {
            assertThat(batch.size()).isEqualTo(1);   // closed without running its message
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
    void aCrashedRunIsCountedWhenItsTakeoverIsGivenUpUnrun() {
        crashedRun("crashed");

        givenUpUnrun();

        assertThat(attempts()).as("the crashed run, counted").isEqualTo(1);
    }

    @Test
    void aCrashedRunIsCountedOnceWhenTheReleaseOfItsTakeoverFails() {
        // Given a run that crashed, and a takeover of it given up unrun whose release fails
        crashedRun("crashed");
        storeFailsReleasing.set(true);
        givenUpUnrun();
        storeFailsReleasing.set(false);
        clock.advance(LEASE.plusSeconds(1));   // the unreleased takeover's lease ends

        // When the next owner takes the key over and counts the crashed run before its handler
        Claim next = memory.claim(List.of(new ClaimRequest(key, 0)), "next", LEASE).get(0);
        assertThat(((Claim.Claimed) next).abandoned()).isTrue();
        memory.count(key, "next", LEASE);

        // Then the one crash is counted once, not once by the given-up takeover and again by the next owner
        assertThat(attempts()).isEqualTo(1);
    }

    @Test
    void aCrashedRunIsCountedWhenTheCountBeforeItsHandlerFailsAndTheClaimIsHandedBack() {
        // Given a run that crashed, taken over by a batch whose count before the handler fails
        crashedRun("crashed");
        storeFailsCounting.set(true);

        // When the message runs: deferred, its claim handed back
        try (IdempotentProcessor<String> processor = processor();
             Batch<String> batch = processor.open(List.of(new Envelope("orders", 0, "0", "orders-0@0", 1, Map.of(),
                     "k".getBytes(StandardCharsets.UTF_8))))) {
            assertThat(batch.process(0)).isInstanceOf(Outcome.Deferred.class);
        }

        // Then the crash is counted with the hand-back, not erased by it
        assertThat(attempts()).isEqualTo(1);
        assertThat(((Claim.Claimed) memory.claim(List.of(new ClaimRequest(key, 0)), "next", LEASE).get(0)).attempt())
                .isEqualTo(2);
    }
}
