package dev.idem.core.memory;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
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

/**
 * A {@link ClaimStore} in one JVM's memory, with the same semantics as the Redis store and time
 * from an injected {@link Clock}. For tests; it is lost with the process. Thread-safe (every
 * method is synchronized, as every Redis script is atomic).
 */
public final class InMemoryClaimStore implements ClaimStore {

    private final Clock clock;
    private final Duration doneWindow;
    private final Duration attemptsWindow;
    private final Map<IdempotencyKey, Entry> entries = new HashMap<>();

    private static final class Entry {
        ClaimRecord.State state;
        String owner;
        Instant leaseUntil;
        long fence;
        int attempts;
        int failures;
        boolean tentative;
        String lastError;
        String compensation;
        Instant firstFailureAt;
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
    }

    /** A store on the system clock, keeping done keys 7 days and attempts 1 day. */
    public static InMemoryClaimStore create() {
        return new InMemoryClaimStore(Clock.systemUTC(), Duration.ofDays(7), Duration.ofDays(1));
    }

    @Override
    public synchronized List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease, boolean firm) {
        Instant now = clock.instant();
        List<Claim> claims = new ArrayList<>(requests.size());
        for (ClaimRequest request : requests) {
            claims.add(claimOne(request, owner, lease, firm, now));
        }
        return claims;
    }

    private Claim claimOne(ClaimRequest request, String owner, Duration lease, boolean firm, Instant now) {
        IdempotencyKey key = request.key();
        Entry e = live(key, now);
        if (e != null && e.state == ClaimRecord.State.DONE) {
            return new Claim.Done(key);
        }
        if (e != null && e.state == ClaimRecord.State.DEAD) {
            return new Claim.Dead(key);
        }
        if (e != null && e.state == ClaimRecord.State.CLAIMED && owner.equals(e.owner)) {
            e.leaseUntil = now.plus(lease);
            return claimed(key, e, false, false);
        }
        if (e != null && e.state == ClaimRecord.State.CLAIMED && e.leaseUntil.isAfter(now)) {
            return new Claim.Busy(key, Duration.between(now, e.leaseUntil));
        }
        boolean fresh = e == null;
        boolean suspect = e != null && e.state == ClaimRecord.State.CLAIMED;
        if (fresh) {
            e = new Entry();
            e.attempts = Math.max(0, request.attemptFloor() - 1);
            entries.put(key, e);
        }
        long nowMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        e.fence = Math.max(e.fence + 1, nowMicros);
        e.state = ClaimRecord.State.CLAIMED;
        e.owner = owner;
        e.leaseUntil = now.plus(lease);
        e.tentative = !firm;
        if (firm) {
            e.attempts++;
        }
        e.expiresAt = now.plus(attemptsWindow);
        return claimed(key, e, suspect, fresh);
    }

    private static Claim.Claimed claimed(IdempotencyKey key, Entry e, boolean suspect, boolean fresh) {
        return new Claim.Claimed(key, e.fence, e.attempts + (e.tentative ? 1 : 0), e.failures, suspect, fresh,
                Optional.ofNullable(e.firstFailureAt));
    }

    @Override
    public synchronized boolean start(IdempotencyKey key, String owner) {
        Entry e = owned(key, owner);
        if (e == null) {
            return false;
        }
        if (e.tentative) {
            e.attempts++;
            e.tentative = false;
        }
        return true;
    }

    @Override
    public synchronized Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease) {
        Set<IdempotencyKey> lost = new HashSet<>();
        for (IdempotencyKey key : keys) {
            Entry e = owned(key, owner);
            if (e == null) {
                lost.add(key);
            } else {
                e.leaseUntil = clock.instant().plus(lease);
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
            if (e == null || e.state != ClaimRecord.State.CLAIMED || !owner.equals(e.owner)) {
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
        settleAttempt(e);
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
    public synchronized void release(Collection<IdempotencyKey> keys, String owner) {
        for (IdempotencyKey key : keys) {
            Entry e = owned(key, owner);
            if (e != null) {
                e.state = ClaimRecord.State.FAILED;
                e.owner = null;
                e.tentative = false;
            }
        }
    }

    @Override
    public synchronized boolean deadLetter(IdempotencyKey key, String owner, String error) {
        Entry e = owned(key, owner);
        if (e == null) {
            return false;
        }
        settleAttempt(e);
        if (!error.isEmpty()) {
            e.failures++;
            e.lastError = error;
        }
        e.state = ClaimRecord.State.DEAD;
        e.owner = null;
        e.compensation = "pending";
        e.expiresAt = clock.instant().plus(doneWindow);
        return true;
    }

    @Override
    public synchronized void recordCompensation(IdempotencyKey key, String outcome) {
        Entry e = live(key, clock.instant());
        if (e != null && e.state == ClaimRecord.State.DEAD) {
            e.compensation = outcome;
        }
    }

    @Override
    public synchronized void reset(IdempotencyKey key) {
        entries.remove(key);
    }

    @Override
    public synchronized Optional<ClaimRecord> inspect(IdempotencyKey key) {
        Instant now = clock.instant();
        Entry e = live(key, now);
        if (e == null) {
            return Optional.empty();
        }
        return Optional.of(new ClaimRecord(e.state, Optional.ofNullable(e.owner), e.fence, e.attempts, e.failures,
                Optional.ofNullable(e.lastError), Optional.ofNullable(e.compensation),
                Duration.between(now, e.expiresAt)));
    }

    /** A tentative claim's attempt is counted once its outcome is known. */
    private static void settleAttempt(Entry e) {
        if (e.tentative) {
            e.attempts++;
            e.tentative = false;
        }
    }

    private Entry owned(IdempotencyKey key, String owner) {
        Entry e = live(key, clock.instant());
        return e != null && e.state == ClaimRecord.State.CLAIMED && owner.equals(e.owner) ? e : null;
    }

    private Entry live(IdempotencyKey key, Instant now) {
        Entry e = entries.get(key);
        if (e != null && !e.expiresAt.isAfter(now)) {
            entries.remove(key);
            return null;
        }
        return e;
    }
}
