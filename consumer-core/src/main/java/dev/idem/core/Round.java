package dev.idem.core;

import org.jspecify.annotations.Nullable;
import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One batch's state on its trip through the {@link Protocol}: its messages and their claims, the
 * claims held for it, what ran, what settled, and what waits for its completion.
 *
 * @param <T> payload type
 */
final class Round<T> {

    // A copy of a key running on another thread of the same batch waits this long for its outcome,
    // then comes back busy this soon.
    static final Duration SAME_KEY_WAIT = Duration.ofSeconds(1);
    static final Duration SAME_KEY_RETRY = Duration.ofMillis(100);
    private static final Object RUNNING = new Object();

    final String owner;
    final List<Prepared<T>> items;
    final Map<IdempotencyKey, Claim> claims;
    final @Nullable ClaimStoreException claimFailure;
    final LeaseRenewer.Held held;
    // The batch's claim span, which its messages' spans link to and its completion's span is under.
    final Tracing.Step claimSpan;
    // Its place among this processor's batches, settled when it has closed.
    final Opening opening;
    // Keys busy at the claim because another batch here held them: asked again when they run.
    final Set<IdempotencyKey> askAgain;
    // Sized for the batch: growing them showed in profiles of 500-record polls.
    final Map<IdempotencyKey, Object> settled;
    final Set<IdempotencyKey> started;
    final Set<IdempotencyKey> toComplete;
    // When the oldest finished key still waiting for its completion finished (guarded by this).
    long waitingSinceNanos;
    // Messages running now (guarded by this): renewal stops only once none runs.
    int running;
    // Threads waiting for a key of this batch running on another thread: written under this
    // monitor, read outside it, so a message that settles with no one waiting takes no lock (a
    // waiter counts itself before it reads the key's outcome; a settler writes the outcome first).
    private volatile int awaiting;
    // Messages run under the read lock; close takes the write lock, so it waits for them.
    final ReadWriteLock lock = new ReentrantReadWriteLock();
    volatile boolean closed;

    Round(String owner, List<Prepared<T>> items, Map<IdempotencyKey, Claim> claims,
          @Nullable ClaimStoreException claimFailure, LeaseRenewer.Held held, Tracing.Step claimSpan, Opening opening,
          Set<IdempotencyKey> askAgain) {
        this.owner = owner;
        this.items = items;
        this.claims = claims;
        this.claimFailure = claimFailure;
        this.held = held;
        this.claimSpan = claimSpan;
        this.opening = opening;
        // Written (a key removed once asked) only when it holds a key: usually it holds none.
        if (askAgain.isEmpty()) {
            this.askAgain = Set.of();
        } else {
            this.askAgain = ConcurrentHashMap.newKeySet(askAgain.size());
            this.askAgain.addAll(askAgain);
        }
        this.settled = new ConcurrentHashMap<>(items.size());
        this.started = ConcurrentHashMap.newKeySet(items.size());
        this.toComplete = ConcurrentHashMap.newKeySet(items.size());
    }

    /**
     * Marks {@code key} as running here, or answers a copy of it: the same key earlier in this batch
     * is not run again (a duplicate, or busy again when it was not acknowledged), and one running on
     * another thread (a copy in another partition or listener call) is waited for, then settled the
     * same way. Null when this message runs.
     */
    @Nullable Outcome runOrAnswer(IdempotencyKey key) {
        Object prior = settled.putIfAbsent(key, RUNNING);
        if (prior == RUNNING) {
            prior = awaitSettled(key, SAME_KEY_WAIT);
            if (!(prior instanceof Outcome)) {
                return new Outcome.Busy(key, SAME_KEY_RETRY);
            }
        }
        if (prior instanceof Outcome earlier) {
            return earlier.disposition().acknowledges()
                    ? new Outcome.Duplicate(key, "same key earlier in this batch")
                    : new Outcome.Busy(key, earlier.disposition().delay());
        }
        // Marked before running, together with the closed check: an abandon either sees this
        // message started (and leaves its claim alone) or stops it here.
        synchronized (this) {
            if (closed) {
                unsettle(key);
                throw new IllegalStateException("batch is closed");
            }
            started.add(key);
            running++;
        }
        return null;
    }

    /**
     * Records a message's outcome, waking a copy waiting for it; a run that ended without one (a
     * crash error) leaves its copies busy, as after a crash.
     */
    void settle(IdempotencyKey key, @Nullable Outcome outcome) {
        settled.put(key, outcome != null ? outcome : new Outcome.Busy(key, SAME_KEY_RETRY));
        wakeWaiting();
    }

    /** A run that never started (the batch closed first): a copy waiting for it stops waiting. */
    void unsettle(IdempotencyKey key) {
        settled.remove(key);
        wakeWaiting();
    }

    private void wakeWaiting() {
        if (awaiting > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    /**
     * Waits at most {@code timeout} while {@code key} runs on another thread; returns what it settled
     * as, null if it never ran, or its running mark if it still runs.
     */
    private @Nullable Object awaitSettled(IdempotencyKey key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            awaiting++;
            try {
                Object now = settled.get(key);
                long left = deadline - System.nanoTime();
                while (now != null && !(now instanceof Outcome) && left > 0) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                    now = settled.get(key);
                    left = deadline - System.nanoTime();
                }
                return now;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return settled.get(key);
            } finally {
                awaiting--;
            }
        }
    }

    int size() {
        return items.size();
    }

    /** Takes the finished keys waiting for their completion; call it holding this round's monitor. */
    List<IdempotencyKey> takeWaiting() {
        List<IdempotencyKey> now = List.copyOf(toComplete);
        toComplete.clear();
        return now;
    }
}
