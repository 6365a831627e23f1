package dev.idem.core.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the leases of held claims while their handlers run, wait their turn in a batch, or wait for
 * their completion: one task per processor on one scheduler thread shared by the JVM, which only
 * sends renewals ({@link ClaimStore#renewAsync}, one call per owner and period, one round trip per
 * store node) and never waits for them, so a slow node or many owners cannot starve the others. An
 * owner whose previous renewal is still under way is skipped that period. Nothing that goes wrong in
 * a round stops later rounds. Lost leases, and the time until which the lease is known to hold,
 * are kept per owner so the processor can refuse to start a handler on a lease it may have lost.
 * Thread-safe.
 */
public final class LeaseRenewer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseRenewer.class);
    private static final ScheduledExecutorService SCHEDULER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "idem-lease-renewer");
        thread.setDaemon(true);
        return thread;
    });
    // Renew three times per lease: two renewals can fail or run late before the lease ends.
    private static final int RENEWALS_PER_LEASE = 3;
    // A failing store is reported at most this often per processor, not once per owner and period.
    private static final long FAILURE_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final ClaimStore store;
    private final Duration lease;
    private final long leaseNanos;
    private final Meters meters;
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final LongSupplier ticker;
    private final AtomicLong lastFailureLog = new AtomicLong(System.nanoTime() - FAILURE_LOG_INTERVAL_NANOS);
    private final ScheduledFuture<?> task;

    /** Claims held by one owner token. Thread-safe. */
    public static final class Held {
        private final Set<IdempotencyKey> keys;
        private final Set<IdempotencyKey> lost = ConcurrentHashMap.newKeySet();
        private final AtomicBoolean renewing = new AtomicBoolean();
        // Keys whose lease one call confirmed beyond the owner's last renewal (see confirmed).
        private final Map<IdempotencyKey, Long> confirmedUntilNanos = new ConcurrentHashMap<>();
        private volatile long validUntilNanos;
        private volatile long leaseNanos;
        private final LongSupplier ticker;

        private Held(int size, LongSupplier ticker) {
            keys = ConcurrentHashMap.newKeySet(size);
            this.ticker = ticker;
        }

        /** Stops renewing a key (it is completed, released or handed back). */
        public void drop(IdempotencyKey key) {
            keys.remove(key);
        }

        /** Renews a key again, e.g. a compensation taken over under this owner. */
        public void add(IdempotencyKey key) {
            keys.add(key);
        }

        /** Whether the key's lease was found lost (another owner holds it). */
        public boolean lost(IdempotencyKey key) {
            return lost.contains(key);
        }

        /**
         * Whether the key's lease may have ended: no renewal of it has been confirmed for a full
         * lease. A key claimed away from this owner can only have been taken after its lease ended,
         * so a lease still valid here rules that out.
         */
        public boolean mayHaveExpired(IdempotencyKey key) {
            long now = ticker.getAsLong();
            Long confirmed = confirmedUntilNanos.get(key);
            return now - validUntilNanos > 0 && (confirmed == null || now - confirmed > 0);
        }

        /** The store confirmed and renewed the key's lease in a call sent at {@code sentAtNanos}. */
        public void confirmed(IdempotencyKey key, long sentAtNanos) {
            confirmedUntilNanos.put(key, sentAtNanos + leaseNanos);
        }
    }

    /**
     * @param store  where leases are renewed
     * @param lease  lease length
     * @param meters where lost leases are counted
     * @param ticker where elapsed time is read for lease validity, in nanoseconds
     */
    public LeaseRenewer(ClaimStore store, Duration lease, Meters meters, LongSupplier ticker) {
        this.store = store;
        this.ticker = ticker;
        this.lease = lease;
        this.leaseNanos = lease.toNanos();
        this.meters = meters;
        long period = Math.max(1, lease.toMillis() / RENEWALS_PER_LEASE);
        this.task = SCHEDULER.scheduleAtFixedRate(this::renewAll, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts renewing {@code keys} for {@code owner}.
     *
     * @param claimedAtNanos the ticker's reading when the claim was sent: the lease holds until
     *                       a lease after that
     */
    public Held hold(String owner, List<IdempotencyKey> keys, long claimedAtNanos) {
        Held entry = new Held(keys.size(), ticker);
        entry.keys.addAll(keys);
        entry.leaseNanos = leaseNanos;
        entry.validUntilNanos = claimedAtNanos + leaseNanos;
        held.put(owner, entry);
        return entry;
    }

    /** Stops renewing everything {@code owner} holds. */
    public void forget(String owner) {
        Held entry = held.remove(owner);
        if (entry != null) {
            entry.keys.clear();   // a renewal still under way reports nothing for them
        }
    }

    private void renewAll() {
        try {
            held.forEach(this::renew);
        } catch (RuntimeException | Error e) {
            // A scheduled task that throws is never run again: nothing may escape a round.
            LOG.error("lease renewal round failed; the next round runs as usual", e);
        }
    }

    private void renew(String owner, Held entry) {
        if (entry.keys.isEmpty() || !entry.renewing.compareAndSet(false, true)) {
            return;
        }
        long sentAt = ticker.getAsLong();
        try {
            store.renewAsync(List.copyOf(entry.keys), owner, lease).whenComplete((lost, error) -> {
                try {
                    if (error != null) {
                        reportFailure(owner, entry, error);
                    } else {
                        renewed(owner, entry, lost, sentAt);
                    }
                } finally {
                    entry.renewing.set(false);
                }
            });
        } catch (RuntimeException e) {
            entry.renewing.set(false);
            reportFailure(owner, entry, e);
        }
    }

    private void renewed(String owner, Held entry, Set<IdempotencyKey> lost, long sentAt) {
        if (sentAt + leaseNanos - entry.validUntilNanos > 0) {
            entry.validUntilNanos = sentAt + leaseNanos;
        }
        // A key the processor gave up (released, failed) while this renewal was under way is gone
        // from the store by its own doing: not a lost lease.
        List<IdempotencyKey> stillHeld = lost.stream().filter(entry.keys::contains).toList();
        if (!stillHeld.isEmpty()) {
            entry.lost.addAll(stillHeld);
            entry.keys.removeAll(stillHeld);
            meters.leaseLost(stillHeld.size());
            LOG.warn("lease lost on {} claim(s) of {}, e.g. {}: another owner may take over; handlers not started "
                    + "yet will not start", stillHeld.size(), owner, stillHeld.get(0));
        }
    }

    private void reportFailure(String owner, Held entry, Throwable error) {
        long now = System.nanoTime();
        long last = lastFailureLog.get();
        if (now - last >= FAILURE_LOG_INTERVAL_NANOS && lastFailureLog.compareAndSet(last, now)) {
            LOG.warn("could not renew {} lease(s) of {} (reported at most every 10 s): {}", entry.keys.size(), owner,
                    error.getMessage());
        }
    }

    @Override
    public void close() {
        task.cancel(false);
        held.clear();
    }
}
