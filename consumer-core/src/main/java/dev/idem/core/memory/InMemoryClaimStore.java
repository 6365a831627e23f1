package dev.idem.core.memory;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.CompensationOutcome;
import dev.idem.core.spi.FailureCount;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ClaimStore} in one JVM's memory, with the same semantics as the Redis store and time
 * from an injected {@link Clock}. For tests; it is lost with the process. Thread-safe (every
 * method is synchronized, as every Redis script is atomic).
 */
// A test double: which of an entry's fields are set follows its state, which NullAway cannot see;
// ClaimStoreContract checks its behaviour against the Redis store's.
@SuppressWarnings("NullAway")
public final class InMemoryClaimStore implements ClaimStore, ClaimAdmin {

    private final Clock clock;
    private final Duration doneWindow;
    private final Duration attemptsWindow;
    private final Map<IdempotencyKey, Entry> entries = new HashMap<>();
    // Keys an operator reset, until when a completion still on its way from before is refused.
    private final Map<IdempotencyKey, Instant> resets = new HashMap<>();
    // When this store began to keep records: see ClaimRequest#bornAt.
    private final Instant epoch;

    private static final Duration RESET_WINDOW = Duration.ofMinutes(5);

    private static final class Entry {
        ClaimRecord.State state;
        @Nullable String owner;
        @Nullable Instant leaseUntil;
        long fence;
        int attempts;
        int failures;
        boolean uncounted;
        @Nullable String lastError;
        @Nullable CompensationOutcome compensation;
        @Nullable String deadLetterReason;
        @Nullable Instant due;
        @Nullable Instant firstFailureAt;
        Instant expiresAt;
    }

    /**
     * @param clock          the time source
     * @param doneWindow     how long DONE and DEAD records are kept
     * @param attemptsWindow how long CLAIMED and FAILED records are kept
     */
    public InMemoryClaimStore(Clock clock, Duration doneWindow, Duration attemptsWindow) {
        this.clock = clock;
        this.doneWindow = doneWindow;
        this.attemptsWindow = attemptsWindow;
        this.epoch = clock.instant();
    }

    /** A store on the system clock, keeping done keys 7 days and attempts 1 day. */
    public static InMemoryClaimStore create() {
        return new InMemoryClaimStore(Clock.systemUTC(), Duration.ofDays(7), Duration.ofDays(1));
    }

    @Override
    public Duration doneWindow() {
        return doneWindow;
    }

    @Override
    public Duration attemptsWindow() {
        return attemptsWindow;
    }

    @Override
    public synchronized List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease) {
        Instant now = clock.instant();
        List<Claim> claims = new ArrayList<>(requests.size());
        for (ClaimRequest request : requests) {
            claims.add(claimOne(request, owner, lease, now));
        }
        return claims;
    }

    private Claim claimOne(ClaimRequest request, String owner, Duration lease, Instant now) {
        IdempotencyKey key = request.key();
        Entry e = live(key, now);
        if (e != null && e.state == ClaimRecord.State.DONE) {
            return new Claim.Done(key);
        }
        if (e != null && e.state == ClaimRecord.State.DEAD) {
            if (isPending(e) && (owner.equals(e.owner) || !e.leaseUntil.isAfter(now))) {
                e.owner = owner;
                e.leaseUntil = now.plus(lease);
                return new Claim.Compensate(key, e.fence, e.attempts, Optional.ofNullable(e.lastError),
                        e.deadLetterReason);
            }
            if (isPending(e)) {
                return new Claim.Busy(key, Duration.between(now, e.leaseUntil));
            }
            return new Claim.Dead(key);
        }
        if (e != null && e.state == ClaimRecord.State.CLAIMED && owner.equals(e.owner)) {
            // Re-entrant (a retried call): while uncounted, the safe reading of a lost first reply.
            e.leaseUntil = now.plus(lease);
            return claimed(key, e, e.uncounted, e.uncounted);
        }
        if (e != null && e.state == ClaimRecord.State.CLAIMED && e.leaseUntil.isAfter(now)) {
            return new Claim.Busy(key, Duration.between(now, e.leaseUntil));
        }
        if (e != null && e.due != null && e.due.isAfter(now)) {
            return new Claim.Busy(key, Duration.between(now, e.due));
        }
        boolean fresh = e == null;
        boolean abandoned = e != null && e.state == ClaimRecord.State.CLAIMED;
        if (fresh) {
            e = new Entry();
            boolean mayHaveLost = request.bornAt() == null || request.bornAt().isBefore(epoch);
            e.attempts = mayHaveLost ? Math.max(0, request.attemptFloor() - 1) : 0;
            entries.put(key, e);
        }
        long nowMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        if (e.deadLetterReason == null) {
            // A key decided for the dead letter keeps the fence that names the dead-lettering.
            e.fence = Math.max(e.fence + 1, nowMicros);
        }
        e.state = ClaimRecord.State.CLAIMED;
        e.owner = owner;
        e.leaseUntil = now.plus(lease);
        e.uncounted = true;
        e.due = null;
        e.expiresAt = now.plus(attemptsWindow);
        return claimed(key, e, abandoned, fresh);
    }

    private static Claim.Claimed claimed(IdempotencyKey key, Entry e, boolean abandoned, boolean fresh) {
        return new Claim.Claimed(key, e.fence, e.attempts + (e.uncounted ? 1 : 0), e.failures, abandoned, fresh,
                Optional.ofNullable(e.firstFailureAt), Optional.ofNullable(e.lastError),
                Optional.ofNullable(e.deadLetterReason));
    }

    @Override
    public synchronized boolean count(IdempotencyKey key, String owner, Duration lease) {
        Entry e = owned(key, owner);
        if (e == null) {
            return false;
        }
        countAttempt(e);
        e.leaseUntil = clock.instant().plus(lease);
        return true;
    }

    @Override
    public synchronized Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease) {
        Set<IdempotencyKey> lost = new HashSet<>();
        Instant now = clock.instant();
        for (IdempotencyKey key : keys) {
            Entry e = live(key, now);
            boolean held = e != null && owner.equals(e.owner) && (e.state == ClaimRecord.State.CLAIMED
                    || (e.state == ClaimRecord.State.DEAD && isPending(e)));
            if (held) {
                e.leaseUntil = now.plus(lease);
            } else {
                lost.add(key);
            }
        }
        return lost;
    }

    @Override
    public synchronized Set<IdempotencyKey> complete(Collection<IdempotencyKey> keys, String owner) {
        Set<IdempotencyKey> refused = new HashSet<>();
        Instant now = clock.instant();
        for (IdempotencyKey key : keys) {
            Entry e = live(key, now);
            if (e != null && e.state == ClaimRecord.State.DONE) {
                continue;
            }
            // No record: it was lost under its owner, who applied the effect (decision 0051), unless an
            // operator reset it since.
            Instant reset = e == null ? resets.get(key) : null;
            if ((reset != null && reset.isAfter(now))
                    || (e != null && (e.state != ClaimRecord.State.CLAIMED || !owner.equals(e.owner)))) {
                refused.add(key);
                continue;
            }
            Entry done = new Entry();
            done.state = ClaimRecord.State.DONE;
            done.expiresAt = now.plus(doneWindow);
            entries.put(key, done);
        }
        return refused;
    }

    @Override
    public synchronized Optional<FailureCount> fail(IdempotencyKey key, String owner, String error) {
        Entry e = owned(key, owner);
        if (e == null) {
            return Optional.empty();
        }
        Instant now = clock.instant();
        countAttempt(e);
        e.failures++;
        e.state = ClaimRecord.State.FAILED;
        e.owner = null;
        e.lastError = error;
        if (e.firstFailureAt == null) {
            e.firstFailureAt = now;
        }
        e.expiresAt = now.plus(attemptsWindow);
        return Optional.of(new FailureCount(e.attempts, e.failures, e.firstFailureAt));
    }

    @Override
    public synchronized void release(Collection<IdempotencyKey> keys, Set<IdempotencyKey> crashed, String owner) {
        Instant now = clock.instant();
        for (IdempotencyKey key : keys) {
            Entry e = owned(key, owner);
            if (e != null && crashed.contains(key)) {
                // Left abandoned, as its crashed owner left it: the next claim takes it over and counts
                // its own run; a count made for this one, whose handler never started, is taken back.
                if (!e.uncounted) {
                    e.attempts--;
                    e.uncounted = true;
                }
                e.owner = null;
                e.leaseUntil = now;
            } else if (e != null) {
                e.state = ClaimRecord.State.FAILED;
                e.owner = null;
                e.uncounted = false;
            } else if ((e = live(key, now)) != null && e.state == ClaimRecord.State.DEAD && isPending(e)
                    && owner.equals(e.owner)) {
                // A compensation held but never started: the next owner takes it over at once (no owner:
                // a renewal already on its way, or a late outcome, finds it no longer held).
                e.owner = null;
                e.leaseUntil = now;
            }
        }
    }

    @Override
    public synchronized boolean doom(IdempotencyKey key, String owner, String reason, String error) {
        Entry e = owned(key, owner);
        if (e == null) {
            return false;
        }
        if (e.deadLetterReason == null) {
            countAttempt(e);
            if (!error.isEmpty()) {
                e.failures++;
                e.lastError = error;
                if (e.firstFailureAt == null) {
                    e.firstFailureAt = clock.instant();
                }
            }
            e.deadLetterReason = reason;
        }
        e.uncounted = false;
        return true;
    }

    @Override
    public synchronized boolean postpone(IdempotencyKey key, String owner, Duration delay) {
        Entry e = owned(key, owner);
        if (e == null) {
            return false;
        }
        e.state = ClaimRecord.State.FAILED;
        e.owner = null;
        e.due = clock.instant().plus(delay);
        return true;
    }

    @Override
    public synchronized boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease) {
        return dead(key, owner, compensationLease, null);
    }

    @Override
    public synchronized boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease, long fence) {
        return dead(key, owner, compensationLease, fence);
    }

    private boolean dead(IdempotencyKey key, String owner, Duration compensationLease, Long fence) {
        Entry e = owned(key, owner);
        if (e == null) {
            return false;
        }
        if (fence != null) {
            e.fence = fence;
        }
        countAttempt(e);
        Instant now = clock.instant();
        e.state = ClaimRecord.State.DEAD;
        e.compensation = CompensationOutcome.PENDING;
        e.due = null;
        e.leaseUntil = now.plus(compensationLease);
        e.expiresAt = now.plus(doneWindow);
        return true;
    }

    @Override
    public synchronized boolean recordCompensation(IdempotencyKey key, String owner, CompensationOutcome outcome) {
        Entry e = live(key, clock.instant());
        if (e == null || e.state != ClaimRecord.State.DEAD || !isPending(e)
                || !owner.equals(e.owner)) {
            return false;
        }
        e.compensation = outcome;
        e.owner = null;
        return true;
    }

    /**
     * Loses {@code key}'s record as a Redis failover or restart would: unlike {@link #reset}, nothing
     * is remembered of it. For tests of what a loss does.
     */
    public synchronized void lose(IdempotencyKey key) {
        entries.remove(key);
    }

    @Override
    public synchronized void reset(IdempotencyKey key) {
        entries.remove(key);
        Instant now = clock.instant();
        resets.values().removeIf(until -> !until.isAfter(now));
        resets.put(key, now.plus(RESET_WINDOW));
    }

    @Override
    public synchronized Optional<ClaimRecord> inspect(IdempotencyKey key) {
        Instant now = clock.instant();
        Entry e = live(key, now);
        return e == null ? Optional.empty() : Optional.of(record(e, now));
    }

    @Override
    public synchronized List<KeyRecord> deadKeys(String group, int limit) {
        Instant now = clock.instant();
        return List.copyOf(entries.keySet()).stream()
                .filter(key -> key.group().equals(group))
                .map(key -> Map.entry(key, Optional.ofNullable(live(key, now))))
                .filter(entry -> entry.getValue().filter(e -> e.state == ClaimRecord.State.DEAD).isPresent())
                .limit(limit)
                .map(entry -> new KeyRecord(entry.getKey(), record(entry.getValue().get(), now)))
                .toList();
    }

    private static ClaimRecord record(Entry e, Instant now) {
        return new ClaimRecord(e.state, Optional.ofNullable(e.owner), e.fence, e.attempts, e.failures,
                Optional.ofNullable(e.lastError), Optional.ofNullable(e.compensation),
                Optional.ofNullable(e.deadLetterReason), Duration.between(now, e.expiresAt));
    }

    private static boolean isPending(Entry e) {
        return e.compensation != null && e.compensation.isPending();
    }

    /** An uncounted claim's attempt is counted once, with its outcome or before its handler runs. */
    private static void countAttempt(Entry e) {
        if (e.uncounted) {
            e.attempts++;
            e.uncounted = false;
        }
    }

    private @Nullable Entry owned(IdempotencyKey key, String owner) {
        Entry e = live(key, clock.instant());
        return e != null && e.state == ClaimRecord.State.CLAIMED && owner.equals(e.owner) ? e : null;
    }

    private @Nullable Entry live(IdempotencyKey key, Instant now) {
        Entry e = entries.get(key);
        if (e != null && !e.expiresAt.isAfter(now)) {
            entries.remove(key);
            return null;
        }
        return e;
    }
}
