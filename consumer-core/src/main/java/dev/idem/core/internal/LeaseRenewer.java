package dev.idem.core.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the leases of held claims while their handlers run or wait their turn in a batch: one
 * task per processor on one scheduler thread shared by the JVM, one round trip per owner and
 * period, never a thread per message. Lost leases are remembered so outcomes can show them.
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

    private final ClaimStore store;
    private final Duration lease;
    private final ProcessorMetrics metrics;
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final ScheduledFuture<?> task;

    /** Claims held by one owner token. */
    public static final class Held {
        private final Set<IdempotencyKey> keys = ConcurrentHashMap.newKeySet();
        private final Set<IdempotencyKey> lost = ConcurrentHashMap.newKeySet();

        /** Stops renewing a key (it is finished or released). */
        public void drop(IdempotencyKey key) {
            keys.remove(key);
        }

        /** Whether the key's lease was lost while held. */
        public boolean lost(IdempotencyKey key) {
            return lost.contains(key);
        }
    }

    /**
     * @param store   where leases are renewed
     * @param lease   lease length
     * @param metrics where lost leases are counted
     */
    public LeaseRenewer(ClaimStore store, Duration lease, ProcessorMetrics metrics) {
        this.store = store;
        this.lease = lease;
        this.metrics = metrics;
        long period = Math.max(1, lease.toMillis() / RENEWALS_PER_LEASE);
        this.task = SCHEDULER.scheduleAtFixedRate(this::renewAll, period, period, TimeUnit.MILLISECONDS);
    }

    /** Starts renewing {@code keys} for {@code owner}. */
    public Held hold(String owner, List<IdempotencyKey> keys) {
        Held entry = new Held();
        entry.keys.addAll(keys);
        held.put(owner, entry);
        return entry;
    }

    /** Stops renewing everything {@code owner} holds. */
    public void forget(String owner) {
        held.remove(owner);
    }

    private void renewAll() {
        held.forEach((owner, entry) -> {
            if (entry.keys.isEmpty()) {
                return;
            }
            try {
                Set<IdempotencyKey> lost = store.renew(List.copyOf(entry.keys), owner, lease);
                if (!lost.isEmpty()) {
                    entry.lost.addAll(lost);
                    entry.keys.removeAll(lost);
                    metrics.leaseLost(lost.size());
                    LOG.warn("lease lost on {} claim(s) of {}, e.g. {}: another owner may take over; "
                            + "the business check keeps the effect single", lost.size(), owner, lost.iterator().next());
                }
            } catch (ClaimStoreException e) {
                LOG.warn("could not renew {} lease(s) of {}: {}", entry.keys.size(), owner, e.getMessage());
            } catch (RuntimeException e) {
                LOG.error("lease renewal of {} failed", owner, e);
            }
        });
    }

    @Override
    public void close() {
        task.cancel(false);
        held.clear();
    }
}
