package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases, in the background, what failed claim calls may hold and could not be released at once:
 * a call whose reply timed out may still run once a paused or slow Redis goes on, so its keys are
 * released again every half second until its lease would have ended. One thread for the JVM, one
 * release call per failed claim call and round, so an outage cannot pile up work. Thread-safe.
 */
final class LateReleases {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);
    // As often as this while the lease may hold: a late claim is freed within this after Redis answers.
    static final Duration RETRY = Duration.ofMillis(500);
    private static final ScheduledExecutorService THREAD = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "idem-late-releases");
        thread.setDaemon(true);
        return thread;
    });

    /** What one failed claim call may hold, and until when its lease may. */
    private record Pending(List<IdempotencyKey> keys, Set<IdempotencyKey> crashed, long untilNanos) {
    }

    private final RedisClaimStore store;
    // By owner token: one failed claim call each (an owner is one batch's).
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();

    LateReleases(RedisClaimStore store) {
        this.store = store;
    }

    /** Releases now; failing that, again in the background until {@code lease} from now. */
    void release(List<IdempotencyKey> keys, Set<IdempotencyKey> crashed, String owner, Duration lease) {
        try {
            store.release(keys, crashed, owner);
        } catch (ClaimStoreException e) {
            LOG.debug("could not release the {} key(s) a failed claim call may hold yet; trying again", keys.size(), e);
            boolean first = pending.isEmpty();
            pending.put(owner, new Pending(List.copyOf(keys), Set.copyOf(crashed), System.nanoTime() + lease.toNanos()));
            if (first) {
                schedule();
            }
        }
    }

    private void schedule() {
        THREAD.schedule(this::retry, RETRY.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void retry() {
        try {
            for (Iterator<Map.Entry<String, Pending>> it = pending.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Pending> entry = it.next();
                Pending one = entry.getValue();
                try {
                    store.release(one.keys(), one.crashed(), entry.getKey());
                    it.remove();
                } catch (ClaimStoreException e) {
                    if (System.nanoTime() - one.untilNanos() >= 0) {
                        it.remove();
                        LOG.warn("could not release the {} key(s) a failed claim call may hold; their leases have "
                                + "expired by now", one.keys().size(), e);
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.error("releasing what failed claim calls may hold failed; trying again", e);
        } finally {
            if (!pending.isEmpty()) {
                schedule();
            }
        }
    }
}
