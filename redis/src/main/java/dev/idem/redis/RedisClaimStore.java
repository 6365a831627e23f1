package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.CompensationOutcome;
import dev.idem.core.spi.FailureCount;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;

/**
 * Claim records in Redis: one short string per key, every change made by one Lua script, every time
 * taken from Redis {@code TIME}. A fresh claim costs Redis one {@code SET NX} of a 12-byte compact
 * record naming its batch and its place there; a batch is completed by one write to its batch record
 * once its keys have all completed, and keys completing before the rest mark their places in it, one
 * write too; any other change rewrites a key as a full record (docs/decisions/0033, 0058).
 * Batches take one round trip per Redis node; on a cluster their keys are grouped by hash slot, each
 * slot with its own batch record. Also the operator's side ({@link ClaimAdmin}). Thread-safe.
 *
 * <p>Needs Redis 6.2 or newer ({@code SET ... GET}, {@code KEEPTTL}). Redis must run with
 * {@code maxmemory-policy noeviction}: an evicted record is a lost claim. {@link Builder#build()}
 * warns when it is not.
 */
public final class RedisClaimStore implements ClaimStore, ClaimAdmin {

    // Fewest keys of one slot in a claim call for which a batch record pays: below, its two writes
    // and its memory cost more than they save (full records instead).
    static final int MIN_COMPACT_BATCH = 8;
    // A batch record completes only within this time of its claim: its keys live the done window
    // longer than that (or than twice the lease), so a batch completed later is completed key by key.
    static final long COMPLETE_WITHIN = Duration.ofHours(1).toMillis();

    private final RedissonClient redisson;
    private final RedisScripts scripts;
    private final KeySpace keys;
    private final long doneWindowMillis;
    private final long attemptsWindowMillis;
    private final CompactClaims<IdempotencyKey> compact = new CompactClaims<>();
    private final ClaimRound claims;
    private final CompletionRound completions;
    private final RenewalRound renewals;
    private final ClaimListings listings;
    // The store as guarded processors use it, with the guarded done window (this store when it is that).
    private final RedisClaimStore guarded;

    private RedisClaimStore(Builder b, Duration doneWindow, Duration attemptsWindow, boolean guardedView) {
        this.redisson = b.redisson;
        this.scripts = new RedisScripts(redisson, "claims.lua");
        this.doneWindowMillis = doneWindow.toMillis();
        this.attemptsWindowMillis = attemptsWindow.toMillis();
        this.keys = new KeySpace(b.keyPrefix, scripts.cluster(), attemptsWindowMillis);
        this.claims = new ClaimRound(this, scripts, keys, compact, doneWindowMillis, attemptsWindowMillis,
                b.minCompactBatch);
        this.completions = new CompletionRound(scripts, keys, compact, doneWindowMillis, attemptsWindowMillis);
        this.renewals = new RenewalRound(scripts, keys, compact);
        this.listings = new ClaimListings(this, redisson, scripts, keys);
        // Failure counts keep their window: they must cover a message's retries, whatever the mode.
        this.guarded = guardedView ? this : new RedisClaimStore(b, b.guardedDoneWindow, b.attemptsWindow, true);
    }

    /**
     * This store with the guarded done window (default an hour; decision 0050): a processor whose
     * business check is an {@code EffectLedger} keeps its done and dead keys that long, since the
     * ledger, not Redis, keeps them single beyond it. The same Redis, prefix, records and attempts
     * window: only how long new done and dead keys are kept differs.
     */
    @Override
    public Optional<ClaimStore> guarded() {
        return Optional.of(guarded);
    }

    /**
     * A builder over an existing Redisson client (single server, sentinel or cluster). The client
     * stays the caller's to shut down, after every processor using the store is closed.
     */
    public static Builder builder(RedissonClient redisson) {
        return new Builder(redisson);
    }

    /**
     * The Redis key of an idempotency key: prefix, group, topic, value, joined with ':'. A ':' or '%'
     * in the group or topic is written {@code %3A} or {@code %25}, so no two keys share a name.
     */
    public String redisKey(IdempotencyKey key) {
        return keys.of(key);
    }

    /** How long done and dead-lettered keys are remembered (by Redis-only processors; {@link #guarded()}'s for guarded ones). */
    @Override
    public Duration doneWindow() {
        return Duration.ofMillis(doneWindowMillis);
    }

    /** How long attempt and failure counts are kept. */
    @Override
    public Duration attemptsWindow() {
        return Duration.ofMillis(attemptsWindowMillis);
    }

    /** One operation on one key. */
    <R> R one(String redisKey, RScript.ReturnType type, Object... args) {
        return scripts.one(redisKey, type, keys.args(keys.slotOf(redisKey), args).toArray());
    }

    /**
     * A per-key change by {@code owner}: once Redis answered that it made it, the key is a full
     * record. A refusal (0 or '') leaves the key compact: Redis refuses a compact key whose batch
     * record it cannot read (a cluster slot being resharded), and rewrote nothing.
     */
    private <R> R change(IdempotencyKey key, String owner, RScript.ReturnType type, Object... args) {
        String redisKey = keys.of(key);
        R reply = one(redisKey, type, args);
        if (made(reply)) {
            compact.changed(key, owner);
        }
        return reply;
    }

    /** Whether a script's reply says the change was made: 1, or a non-empty text. */
    private static boolean made(Object reply) {
        return reply instanceof Number n ? n.longValue() == 1 : reply != null && !reply.toString().isEmpty();
    }

    @Override
    public List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease) {
        return claims.claim(requests, owner, lease);
    }

    @Override
    public boolean count(IdempotencyKey key, String owner, Duration lease) {
        return yes(change(key, owner, RScript.ReturnType.INTEGER, "count", owner, Long.toString(lease.toMillis())));
    }

    @Override
    public Set<IdempotencyKey> renew(Collection<IdempotencyKey> keys, String owner, Duration lease) {
        return join(renewAsync(keys, owner, lease));
    }

    @Override
    public CompletableFuture<Set<IdempotencyKey>> renewAsync(Collection<IdempotencyKey> keys, String owner,
                                                            Duration lease) {
        return renewals.renewAsync(keys, owner, lease);
    }

    @Override
    public Set<IdempotencyKey> complete(Collection<IdempotencyKey> keys, String owner) {
        return join(completeAsync(keys, owner));
    }

    @Override
    public CompletableFuture<Set<IdempotencyKey>> completeAsync(Collection<IdempotencyKey> keys, String owner) {
        return completions.completeAsync(keys, owner);
    }

    private static <R> R join(CompletableFuture<R> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof ClaimStoreException failure) {
                throw failure;
            }
            throw new ClaimStoreException("Redis unavailable or failing: " + RedisScripts.rootMessage(e), e);
        }
    }

    @Override
    public Optional<FailureCount> fail(IdempotencyKey key, String owner, String error) {
        return ClaimRecords.failureCount(change(key, owner, RScript.ReturnType.VALUE, "fail", owner,
                ClaimRecords.text(error), Long.toString(attemptsWindowMillis)));
    }

    @Override
    public void release(Collection<IdempotencyKey> keys, Set<IdempotencyKey> crashed, String owner) {
        List<IdempotencyKey> ordered = List.copyOf(keys);
        List<String> redisKeys = ordered.stream().map(this::redisKey).toList();
        List<Object> replies = scripts.many(redisKeys, (slot, group) -> {
            // One flag per key of the group: 'c' leaves a takeover abandoned, for the next claim to count.
            StringBuilder flags = new StringBuilder(group.size());
            for (int i : group) {
                flags.append(crashed.contains(ordered.get(i)) ? 'c' : '-');
            }
            return new RedisScripts.Extra(List.of(), this.keys.args(slot, "release", owner, flags.toString()));
        });
        for (int i = 0; i < redisKeys.size(); i++) {
            if (made(replies.get(i))) {
                compact.changed(ordered.get(i), owner);
            }
        }
    }

    @Override
    public boolean doom(IdempotencyKey key, String owner, String reason, String error) {
        return yes(change(key, owner, RScript.ReturnType.INTEGER, "doom", owner, ClaimRecords.text(reason),
                ClaimRecords.text(error)));
    }

    @Override
    public boolean postpone(IdempotencyKey key, String owner, Duration delay) {
        return yes(change(key, owner, RScript.ReturnType.INTEGER, "postpone", owner,
                Long.toString(delay.toMillis())));
    }

    @Override
    public boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease) {
        return yes(change(key, owner, RScript.ReturnType.INTEGER, "dead", owner,
                Long.toString(doneWindowMillis), Long.toString(compensationLease.toMillis()), ""));
    }

    @Override
    public boolean deadLetter(IdempotencyKey key, String owner, Duration compensationLease, long fence) {
        return yes(change(key, owner, RScript.ReturnType.INTEGER, "dead", owner,
                Long.toString(doneWindowMillis), Long.toString(compensationLease.toMillis()), Long.toString(fence)));
    }

    @Override
    public boolean recordCompensation(IdempotencyKey key, String owner, CompensationOutcome outcome) {
        return yes(one(redisKey(key), RScript.ReturnType.INTEGER, "compensated", owner, ClaimRecords.text(outcome.text())));
    }

    private static boolean yes(Object reply) {
        return ((Number) reply).longValue() == 1;
    }

    @Override
    public void reset(IdempotencyKey key) {
        one(redisKey(key), RScript.ReturnType.INTEGER, "reset");
    }

    @Override
    public Optional<ClaimRecord> inspect(IdempotencyKey key) {
        List<Object> reply = one(redisKey(key), RScript.ReturnType.MULTI, "inspect");
        return ClaimRecords.record((String) reply.get(0),
                Duration.ofMillis(Math.max(0, Long.parseLong((String) reply.get(1)))));
    }

    @Override
    public List<KeyRecord> pendingCompensations(String group, int limit) {
        return listings.pendingCompensations(group, limit);
    }

    @Override
    public List<KeyRecord> deadKeys(String group, int limit) {
        return listings.deadKeys(group, limit);
    }

    /** Builds a {@link RedisClaimStore}; validates on {@link #build()}. Not thread-safe. */
    public static final class Builder {

        private final RedissonClient redisson;
        private String keyPrefix = "idem:";
        // Done and dead records are remembered for 7 days, the dedup window of Redis-only processors.
        private Duration doneWindow = Duration.ofDays(7);
        // A guarded processor's done keys only spare its business check a query: an hour covers the
        // copies a storm, a rebalance or a producer retry brings, at 1/168 of a week's memory.
        private Duration guardedDoneWindow = Duration.ofHours(1);
        // Failure counts live a day: a message failing less often than that is retried afresh.
        private Duration attemptsWindow = Duration.ofDays(1);
        private int minCompactBatch = MIN_COMPACT_BATCH;

        private Builder(RedissonClient redisson) {
            this.redisson = Objects.requireNonNull(redisson, "redisson");
        }

        /** Prefix of every Redis key. Default {@code idem:}. */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * How long done and dead-lettered keys are remembered for processors in Redis-only mode, whose
         * only dedup window it is. Default 7 days.
         */
        public Builder doneWindow(Duration doneWindow) {
            this.doneWindow = doneWindow;
            return this;
        }

        /**
         * How long done and dead-lettered keys are remembered for guarded processors (on an
         * {@code EffectLedger}), whose ledger keeps them single beyond it. Default 1 hour; it may be
         * shorter than the attempts window, which failure counts keep whatever the mode.
         */
        public Builder guardedDoneWindow(Duration guardedDoneWindow) {
            this.guardedDoneWindow = guardedDoneWindow;
            return this;
        }

        /** How long attempt and failure counts are kept. Default 1 day. */
        public Builder attemptsWindow(Duration attemptsWindow) {
            this.attemptsWindow = attemptsWindow;
            return this;
        }

        /** Tests only: the fewest keys of a slot for compact claims (1 makes every fresh claim compact). */
        Builder minCompactBatch(int keys) {
            this.minCompactBatch = keys;
            return this;
        }

        /**
         * Builds the store, loads its scripts and warns if Redis may evict keys.
         *
         * @throws IllegalArgumentException naming a wrong setting
         * @throws ClaimStoreException      if Redis cannot be reached
         */
        public RedisClaimStore build() {
            if (keyPrefix == null) {
                throw new IllegalArgumentException("keyPrefix must not be null");
            }
            if (doneWindow == null || doneWindow.toMillis() < 1000) {
                throw new IllegalArgumentException("doneWindow must be >= 1s but was " + doneWindow);
            }
            if (attemptsWindow == null || attemptsWindow.toMillis() < 1000) {
                throw new IllegalArgumentException("attemptsWindow must be >= 1s but was " + attemptsWindow);
            }
            if (guardedDoneWindow == null || guardedDoneWindow.toMillis() < 1000) {
                throw new IllegalArgumentException("guardedDoneWindow must be >= 1s but was " + guardedDoneWindow);
            }
            RedisClaimStore store = new RedisClaimStore(this, doneWindow, attemptsWindow, false);
            store.scripts.load();
            store.guarded.scripts.load();
            NoEviction.warnUnless(store.redisson, store.scripts.cluster());
            return store;
        }
    }
}
