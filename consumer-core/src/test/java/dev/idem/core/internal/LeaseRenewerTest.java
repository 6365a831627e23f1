package dev.idem.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.memory.InMemoryClaimStore;
import dev.idem.core.spi.ClaimStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Lost leases are the store's news, not the processor's own releases. */
class LeaseRenewerTest {

    private static final IdempotencyKey KEY = new IdempotencyKey("inventory", "orders", "order-1");
    private static final IdempotencyKey OTHER = new IdempotencyKey("inventory", "orders", "order-2");

    private final AtomicInteger lostLeases = new AtomicInteger();
    private final Meters meters = new Meters() {
        @Override
        public void leaseLost(int count) {
            lostLeases.addAndGet(count);
        }
    };
    private final CompletableFuture<Set<IdempotencyKey>> renewal = new CompletableFuture<>();
    private final CountDownLatch renewalSent = new CountDownLatch(1);

    /** A store whose renewals wait for the test to answer them; everything else is in memory. */
    private ClaimStore store() {
        InMemoryClaimStore memory = InMemoryClaimStore.create();
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("renewAsync")) {
                        renewalSent.countDown();
                        return renewal;
                    }
                    try {
                        return method.invoke(memory, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aClaimGivenUpWhileItsRenewalIsUnderWayIsNotALostLease() throws Exception {
        try (LeaseRenewer renewer = new LeaseRenewer(store(), Duration.ofMillis(300), meters, System::nanoTime)) {
            LeaseRenewer.Held held = renewer.hold("owner-1", List.of(KEY, OTHER), System.nanoTime());
            assertThat(renewalSent.await(5, TimeUnit.SECONDS)).isTrue();

            held.drop(KEY);                          // the processor released or failed this claim
            renewal.complete(Set.of(KEY, OTHER));    // the renewal sent before finds both gone

            // OTHER was still held: its lease is lost; KEY's end was the processor's own doing.
            await().atMost(Duration.ofSeconds(5)).until(() -> held.lost(OTHER));
            assertThat(held.lost(KEY)).isFalse();
            assertThat(lostLeases).hasValue(1);
        }
    }
}
