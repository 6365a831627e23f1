package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.ClaimStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A batch's completion is sent, not awaited (decision 0007). A copy of a key whose completion is
 * still on its way waits for it and is found done; a claim of other keys does not wait.
 */
class CompletionInFlightTest {

    private static final long COMPLETION_DELAY_MILLIS = 1_500;

    private final InMemoryClaimStore memory = InMemoryClaimStore.create();
    private final List<String> handled = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> claims = new ConcurrentHashMap<>();

    /** The in-memory store, with completions that land {@link #COMPLETION_DELAY_MILLIS} after they are sent. */
    private ClaimStore slowCompletions() {
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("completeAsync")) {
                        @SuppressWarnings("unchecked")
                        Collection<IdempotencyKey> keys = (Collection<IdempotencyKey>) args[0];
                        String owner = (String) args[1];
                        return CompletableFuture.supplyAsync(() -> memory.complete(keys, owner),
                                CompletableFuture.delayedExecutor(COMPLETION_DELAY_MILLIS, TimeUnit.MILLISECONDS));
                    }
                    try {
                        return method.invoke(memory, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private IdempotentProcessor<String> processor() {
        return IdempotentProcessor.<String>builder(delivery -> handled.add(delivery.payload()))
                .group("inventory").claims(ClaimCounts.counting(slowCompletions(), claims)).dedupCheck(DedupCheck.none())
                .codec(PayloadCodec.utf8()).keys(KeySource.payload(p -> p))
                .deadLetters(letter -> {
                    throw new AssertionError("no dead letter expected: " + letter);
                }).build();
    }

    private static Envelope envelope(String body, int offset) {
        return new Envelope("orders", 0, String.valueOf(offset), "orders-0@" + offset, 0, Map.of(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aCopyInTheNextBatchWaitsForTheCompletionAndIsADuplicateNotBusy() {
        try (IdempotentProcessor<String> processor = processor()) {
            try (Batch<String> first = processor.open(List.of(envelope("order-1", 1)))) {
                assertThat(first.process(0)).isInstanceOf(Outcome.Applied.class);
            }
            try (Batch<String> next = processor.open(List.of(envelope("order-1", 2)))) {
                assertThat(next.process(0)).isInstanceOf(Outcome.Duplicate.class);
            }
        }
        assertThat(handled).containsExactly("order-1");
        // Answered from the completion it waited for, which confirmed the key done (decision 0059).
        assertThat(claims).as("claims of the key").containsEntry("order-1", 2);
    }

    @Test
    void aClaimOfOtherKeysDoesNotWaitForACompletionOnItsWay() {
        try (IdempotentProcessor<String> processor = processor()) {
            try (Batch<String> first = processor.open(List.of(envelope("order-1", 1)))) {
                first.process(0);
            }
            long started = System.nanoTime();
            try (Batch<String> next = processor.open(List.of(envelope("order-2", 2)))) {
                long openMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
                assertThat(openMillis).as("open() of an unrelated key, ms").isLessThan(COMPLETION_DELAY_MILLIS / 2);
                assertThat(next.process(0)).isInstanceOf(Outcome.Applied.class);
            }
        }
        assertThat(handled).containsExactly("order-1", "order-2");
    }
}
