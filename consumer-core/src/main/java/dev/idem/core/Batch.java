package dev.idem.core;

import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Pipeline;
import dev.idem.core.internal.Prepared;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Messages claimed together in one round trip, processed one by one, and completed together in
 * one more round trip sent by {@link #close()}, which does not wait for it (decision 0007): the
 * adapter acknowledges the broker meanwhile. Until the completion lands the keys stay claimed by
 * this batch, so other consumers find them busy; the processor's next claim waits for it. Thread-safe: several threads may process different messages
 * (one per partition, say); a key running on one thread is {@link Outcome.Busy} on another. Close
 * the batch once, after every thread is done with it.
 *
 * @param <T> payload type
 */
public final class Batch<T> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Batch.class);

    private final Pipeline<T> pipeline;
    private final ClaimStore store;
    private final LeaseRenewer renewer;
    private final Consumer<CompletableFuture<?>> pendingCompletion;
    private final String owner;
    private final boolean firm;
    private final List<Prepared<T>> items;
    private final Map<IdempotencyKey, Claim> claims;
    private final ClaimStoreException claimFailure;
    private final LeaseRenewer.Held held;
    // A copy of a key that is running on another thread is asked to come back this soon.
    private static final Duration SAME_KEY_RETRY = Duration.ofMillis(100);
    private static final Object RUNNING = new Object();

    private final Map<IdempotencyKey, Object> settled = new ConcurrentHashMap<>();
    private final Set<IdempotencyKey> toComplete = ConcurrentHashMap.newKeySet();
    private final Set<IdempotencyKey> started = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    Batch(Pipeline<T> pipeline, ClaimStore store, LeaseRenewer renewer, String owner, boolean firm,
          List<Prepared<T>> items, Map<IdempotencyKey, Claim> claims, ClaimStoreException claimFailure,
          Consumer<CompletableFuture<?>> pendingCompletion) {
        this.pipeline = pipeline;
        this.store = store;
        this.renewer = renewer;
        this.pendingCompletion = pendingCompletion;
        this.owner = owner;
        this.firm = firm;
        this.items = items;
        this.claims = claims;
        this.claimFailure = claimFailure;
        this.held = renewer.hold(owner, claims.entrySet().stream()
                .filter(e -> e.getValue() instanceof Claim.Claimed).map(Map.Entry::getKey).toList());
    }

    /** How many messages the batch holds. */
    public int size() {
        return items.size();
    }

    /**
     * Processes message {@code index}. A key seen earlier in the same batch is not run again: it is
     * a duplicate of an earlier success, or waits for the redelivery of an earlier failure.
     *
     * @throws IllegalStateException if the batch is closed
     */
    public Outcome process(int index) {
        if (closed) {
            throw new IllegalStateException("batch is closed");
        }
        Prepared<T> item = items.get(index);
        IdempotencyKey key = item.key();
        if (claimFailure != null) {
            return pipeline.unavailable(item, claimFailure);
        }
        Object prior = settled.putIfAbsent(key, RUNNING);
        if (prior == RUNNING) {
            return new Outcome.Busy(key, SAME_KEY_RETRY);
        }
        if (prior instanceof Outcome earlier) {
            return earlier.disposition().acknowledges()
                    ? new Outcome.Duplicate(key, "same key earlier in this batch")
                    : new Outcome.Busy(key, earlier.disposition().delay());
        }
        // Marked before running: if an Error escapes the handler, close() must not release the key as
        // never started; its lease expires as after a crash, and the next run is counted.
        started.add(key);
        Outcome outcome = pipeline.run(item, claims.get(key), owner, firm, held::lost, toComplete::add);
        settled.put(key, outcome);
        held.drop(key);
        return outcome;
    }

    /**
     * Leaves the batch as a crashed process would: nothing completed, nothing released, leases no
     * longer renewed, so they expire and the next owner takes the keys over as suspect. For a
     * consumer that stops on an {@link Error} it cannot handle.
     */
    public synchronized void abandon() {
        closed = true;
        renewer.forget(owner);
    }

    /**
     * Sends the completion of the successes (one round trip, not awaited) and releases the claims of
     * messages never started. Store failures are logged, not thrown: the effects are applied and the
     * business check guards them.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        renewer.forget(owner);
        List<IdempotencyKey> unprocessed = new ArrayList<>();
        claims.forEach((key, claim) -> {
            if (claim instanceof Claim.Claimed && !started.contains(key)) {
                unprocessed.add(key);
            }
        });
        try {
            if (!unprocessed.isEmpty()) {
                store.release(unprocessed, owner);
            }
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {} unstarted claim(s); their leases will expire", unprocessed.size(), e);
        }
        if (toComplete.isEmpty()) {
            return;
        }
        int count = toComplete.size();
        pendingCompletion.accept(store.completeAsync(List.copyOf(toComplete), owner).whenComplete((refused, error) -> {
            if (error != null) {
                LOG.warn("could not record {} completion(s); their leases will expire and the business check "
                        + "will recognise the effects", count, error);
            } else if (!refused.isEmpty()) {
                LOG.warn("{} completion(s) refused because their claims passed to another owner, e.g. {}",
                        refused.size(), refused.iterator().next());
            }
        }));
    }
}
