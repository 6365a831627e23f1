package dev.idem.core.internal;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The keys this process has deferred in a row (not acknowledged, not counted), each with how often,
 * since when, and since when its handler met infrastructure trouble: a deferral's backoff grows with
 * its number (a Kafka record has no delivery count of its own), and a handler's trouble that has
 * lasted past the bound counts as a failure. Remembers at most {@value #MAX_KEYS} keys, the least
 * recently deferred forgotten first; a forgotten key starts again at one, which only shortens its
 * next delay. Thread-safe.
 */
public final class Deferrals {

    // Far more keys than are ever deferred at once by one processor (one per Kafka partition, a
    // few hundred RocketMQ messages in flight), small enough to hold in memory.
    private static final int MAX_KEYS = 10_000;

    private record Row(int count, Instant since, @Nullable Instant troubleSince, Instant last) {
    }

    // A row not deferred again for this long went elsewhere (a rebalance) or was settled by another
    // consumer; longer than any delay between two deliveries of one key.
    private final Duration stale;
    private final Map<IdempotencyKey, Row> rows = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<IdempotencyKey, Row> eldest) {
            return size() > MAX_KEYS;
        }
    };
    // Rows held, written under the lock: every acknowledged message settles its key, and almost none
    // was deferred, so settling reads this instead of taking the lock.
    private volatile int held;

    /**
     * @param longestDelay the backoff's longest delay: a row lives three of them without a deferral
     *                     (and at least 10 minutes) before it is taken for gone
     */
    public Deferrals(Duration longestDelay) {
        Duration three = longestDelay.multipliedBy(3);
        this.stale = three.compareTo(Duration.ofMinutes(10)) > 0 ? three : Duration.ofMinutes(10);
    }

    /** Records one more deferral of {@code key} at {@code now}; returns its number in the row, from 1. */
    public synchronized int next(IdempotencyKey key, Instant now) {
        Row row = current(key, now);
        Row next = row == null ? new Row(1, now, null, now) : new Row(row.count + 1, row.since, row.troubleSince, now);
        rows.put(key, next);
        held = rows.size();
        return next.count;
    }

    /**
     * How long the handler of {@code key} has met infrastructure trouble at {@code now}, counted
     * from the first time it did in this row (which starts now when it never did).
     */
    public synchronized Duration handlerTrouble(IdempotencyKey key, Instant now) {
        Row row = current(key, now);
        if (row == null || row.troubleSince == null) {
            rows.put(key, row == null ? new Row(0, now, now, now) : new Row(row.count, row.since, now, now));
            held = rows.size();
            return Duration.ZERO;
        }
        rows.put(key, new Row(row.count, row.since, row.troubleSince, now));
        return Duration.between(row.troubleSince, now);
    }

    /** The key's row, unless it went stale (then it is dropped: the key starts a new row). */
    private @Nullable Row current(IdempotencyKey key, Instant now) {
        Row row = rows.get(key);
        if (row != null && Duration.between(row.last, now).compareTo(stale) > 0) {
            rows.remove(key);
            held = rows.size();
            return null;
        }
        return row;
    }

    /** The key was settled (acknowledged): its next deferral starts a new row. */
    public void settled(IdempotencyKey key) {
        if (held == 0) {
            return;
        }
        synchronized (this) {
            rows.remove(key);
            held = rows.size();
        }
    }

    /** When the longest row of deferrals still going on at {@code now} began, if any; stale rows are dropped. */
    public synchronized Optional<Instant> oldest(Instant now) {
        rows.values().removeIf(row -> Duration.between(row.last, now).compareTo(stale) > 0);
        held = rows.size();
        return rows.values().stream().map(Row::since).min(Instant::compareTo);
    }
}
