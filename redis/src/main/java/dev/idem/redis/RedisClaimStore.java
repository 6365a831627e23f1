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
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.KeysScanOptions;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claim records in Redis: one short string per key, every change made by one Lua script, every time
 * taken from Redis {@code TIME}. A fresh claim costs Redis one {@code SET NX} of a 12-byte compact
 * record naming its batch; a batch whose keys all complete together is completed by one write to
 * its batch record, and any other change rewrites a key as a full record (docs/decisions/0033).
 * Batches take one round trip per Redis node; on a cluster their keys are grouped by hash slot, each
 * slot with its own batch record. Also the operator's side ({@link ClaimAdmin}). Thread-safe.
 *
 * <p>Needs Redis 6.2 or newer ({@code SET ... GET}, {@code KEEPTTL}). Redis must run with
 * {@code maxmemory-policy noeviction}: an evicted record is a lost claim. {@link Builder#build()}
 * warns when it is not.
 */
public final class RedisClaimStore implements ClaimStore, ClaimAdmin {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);
    // Keys listed per SCAN call by the operator's listings.
    private static final int SCAN_COUNT = 1_000;
    // How long a slot that answered TRYAGAIN is taken for one being migrated: its keys go one by one.
    private static final Duration MIGRATING_FOR = Duration.ofSeconds(10);
    // Fewest keys of one slot in a claim call for which a batch record pays: below, its two writes
    // and its memory cost more than they save (full records instead).
    static final int MIN_COMPACT_BATCH = 8;
    // A batch record completes only within this time of its claim: its keys live the done window
    // longer than that (or than twice the lease), so a batch completed later is completed key by key.
    private static final long COMPLETE_WITHIN = Duration.ofHours(1).toMillis();

    private final RedissonClient redisson;
    private final RedisScripts scripts;
    private final String prefix;
    private final long doneWindowMillis;
    private final long attemptsWindowMillis;
    // Slots that answered TRYAGAIN lately, with when (System.nanoTime) that stops being assumed.
    private final Map<Integer, Long> migrating = new ConcurrentHashMap<>();
    private final CompactClaims compact = new CompactClaims();
    private final int minCompactBatch;

    private RedisClaimStore(Builder b) {
        this.redisson = b.redisson;
        this.scripts = new RedisScripts(redisson, "claims.lua");
        this.prefix = b.keyPrefix;
        this.doneWindowMillis = b.doneWindow.toMillis();
        this.attemptsWindowMillis = b.attemptsWindow.toMillis();
        this.minCompactBatch = b.minCompactBatch;
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
        return prefix + escape(key.group()) + ':' + escape(key.topic()) + ':' + key.value();
    }

    private static String escape(String part) {
        if (part.indexOf(':') < 0 && part.indexOf('%') < 0) {
            return part;
        }
        return part.replace("%", "%25").replace(":", "%3A");
    }

    private static String unescape(String part) {
        if (part.indexOf('%') < 0) {
            return part;
        }
        return part.replace("%3A", ":").replace("%25", "%");
    }

    /** How long done and dead-lettered keys are remembered. */
    @Override
    public Duration doneWindow() {
        return Duration.ofMillis(doneWindowMillis);
    }

    /** How long attempt and failure counts are kept. */
    @Override
    public Duration attemptsWindow() {
        return Duration.ofMillis(attemptsWindowMillis);
    }

    /** The epoch key of a slot group: in the group's slot on a cluster, one key on a single server. */
    private String epochKey(int slot) {
        return prefix + "epoch" + (slot < 0 ? "" : Slots.tag(slot));
    }

    /** The prefix of a slot group's batch records. */
    private String batchPrefix(int slot) {
        return prefix + "batch" + (slot < 0 ? "" : Slots.tag(slot)) + ":";
    }

    private int slotOf(String redisKey) {
        return scripts.cluster() ? Slots.of(redisKey) : -1;
    }

    /** The index of a slot group's pending compensations: in the group's slot on a cluster. */
    private String pendingKey(int slot) {
        return prefix + "pending" + (slot < 0 ? "" : Slots.tag(slot));
    }

    /**
     * An operation's arguments, ended as every operation's are: pending-compensation index, attempts
     * window, batch prefix.
     */
    private List<Object> args(int slot, Object... args) {
        List<Object> all = new ArrayList<>(args.length + 3);
        all.addAll(List.of(args));
        all.add(pendingKey(slot));
        all.add(Long.toString(attemptsWindowMillis));
        all.add(batchPrefix(slot));
        return all;
    }

    private <R> R one(String redisKey, RScript.ReturnType type, Object... args) {
        return scripts.one(redisKey, type, args(slotOf(redisKey), args).toArray());
    }

    /**
     * A per-key change by {@code owner}: once Redis answered that it made it, the key is a full
     * record. A refusal (0 or '') leaves the key compact: Redis refuses a compact key whose batch
     * record it cannot read (a cluster slot being resharded), and rewrote nothing.
     */
    private <R> R change(IdempotencyKey key, String owner, RScript.ReturnType type, Object... args) {
        String redisKey = redisKey(key);
        R reply = one(redisKey, type, args);
        if (made(reply)) {
            compact.changed(redisKey, owner);
        }
        return reply;
    }

    /** Whether a script's reply says the change was made: 1, or a non-empty text. */
    private static boolean made(Object reply) {
        return reply instanceof Number n ? n.longValue() == 1 : reply != null && !reply.toString().isEmpty();
    }

    @Override
    public List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease) {
        List<String> keys = requests.stream().map(r -> redisKey(r.key())).toList();
        long window = Math.max(attemptsWindowMillis, lease.toMillis() * 2);
        String compactWindow = Long.toString(doneWindowMillis + Math.max(COMPLETE_WITHIN, lease.toMillis() * 2));
        Map<Integer, String> batchRecords = new ConcurrentHashMap<>();
        // Keys of a slot seen being migrated go one by one; the others in one call per slot.
        List<Integer> grouped = new ArrayList<>(keys.size());
        List<Integer> alone = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            (migrating.isEmpty() || !migrating(slotOf(keys.get(i))) ? grouped : alone).add(i);
        }
        List<Object> replies = new ArrayList<>(java.util.Collections.nCopies(keys.size(), null));
        List<Object> groupReplies = grouped.isEmpty() ? List.of()
                : scripts.each(grouped.stream().map(keys::get).toList(), (slot, group) -> {
            long fresh = group.stream().filter(i -> requests.get(grouped.get(i)).attemptFloor() <= 1).count();
            String id = fresh >= minCompactBatch ? BatchIds.next() : "";
            batchRecords.put(slot, batchPrefix(slot) + id);
            List<Object> claimArgs = new ArrayList<>(List.of("claim", owner, Long.toString(lease.toMillis()),
                    Long.toString(window), compactWindow, id));
            StringBuilder perKey = new StringBuilder(group.size() * 16);
            for (int i : group) {
                appendFloorAndBorn(perKey, requests.get(grouped.get(i)));
            }
            claimArgs.add(perKey.toString());
            return new RedisScripts.Extra(List.of(epochKey(slot), batchRecords.get(slot)),
                    args(slot, claimArgs.toArray()));
        });
        for (int g = 0; g < grouped.size(); g++) {
            Object reply = groupReplies.get(g);
            if (reply instanceof RedisScripts.Failed failed && (failed.tryAgain() || !failed.known())) {
                // A slot being migrated, or a call whose reply is missing (the batch failed elsewhere):
                // claimed again alone, which a claim by the same owner may be (it keeps its claim).
                if (failed.tryAgain()) {
                    migrating.put(slotOf(keys.get(grouped.get(g))), System.nanoTime() + MIGRATING_FOR.toNanos());
                }
                alone.add(grouped.get(g));
            } else {
                replies.set(grouped.get(g), reply);
            }
        }
        for (int i : alone) {
            replies.set(i, claimAlone(keys.get(i), requests.get(i), owner, lease, window, compactWindow));
        }
        failIfAnyFailed(replies, requests, owner);
        Map<Integer, List<String>> compactBySlot = new HashMap<>();
        List<String> full = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            String reply = (String) replies.get(i);
            if (reply.startsWith("c:")) {
                compactBySlot.computeIfAbsent(slotOf(keys.get(i)), s -> new ArrayList<>()).add(keys.get(i));
                replies.set(i, "C" + reply.substring(1));
            } else if (reply.startsWith("C:") || reply.startsWith("K:")) {
                full.add(keys.get(i));
            }
        }
        compactBySlot.forEach((slot, compactKeys) -> compact.claimed(batchRecords.get(slot), owner, compactKeys));
        // After: a key answered twice in one call (compact, then claimed again) is a full record.
        // Only a claimed reply rewrote the key; Done, Busy or Unreadable left it as it was.
        full.forEach(key -> compact.changed(key, owner));
        List<Claim> claims = new ArrayList<>(requests.size());
        String lastReply = null;
        Claim last = null;
        for (int i = 0; i < requests.size(); i++) {
            // Fresh claims of one call share one reply: parsed once.
            String reply = (String) replies.get(i);
            Claim claim = reply.equals(lastReply) && last instanceof Claim.Claimed same
                    ? ClaimRecords.rekeyed(same, requests.get(i).key())
                    : ClaimRecords.claim(requests.get(i).key(), reply);
            lastReply = reply;
            last = claim;
            if (claim instanceof Claim.Unreadable) {
                LOG.error("Redis key {} holds a value that is not an Idem claim record; {} cannot be processed "
                        + "until it is removed (is something else writing under the prefix '{}'?)",
                        keys.get(i), claim.key(), prefix);
            }
            claims.add(claim);
        }
        return claims;
    }

    private static void appendFloorAndBorn(StringBuilder perKey, ClaimRequest request) {
        // 0 is "unknown", as is a born time before 1970.
        perKey.append(request.attemptFloor()).append(':')
                .append(request.bornAt() == null ? 0 : Math.max(0, request.bornAt().toEpochMilli())).append(',');
    }

    private boolean migrating(int slot) {
        Long until = migrating.get(slot);
        if (until == null) {
            return false;
        }
        if (System.nanoTime() - until > 0) {
            migrating.remove(slot, until);
            return false;
        }
        return true;
    }

    /**
     * One key claimed alone (its slot is being migrated: a call naming several keys there gets
     * TRYAGAIN while some are missing), as a full record.
     *
     * @return the script's reply, or a {@link RedisScripts.Failed}
     */
    private Object claimAlone(String redisKey, ClaimRequest request, String owner, Duration lease, long window,
                              String compactWindow) {
        StringBuilder perKey = new StringBuilder(24);
        appendFloorAndBorn(perKey, request);
        try {
            List<Object> reply = one(redisKey, RScript.ReturnType.MULTI, "claim1", owner,
                    Long.toString(lease.toMillis()), Long.toString(window), compactWindow, "", perKey.toString(),
                    epochKey(slotOf(redisKey)));
            return reply.get(0);
        } catch (ClaimStoreException e) {
            return new RedisScripts.Failed(e, true);
        }
    }

    /**
     * A claim call is whole or nothing to its caller: when a slot's call failed, every key the call
     * may have claimed (claimed, or whose reply is missing) is released before the failure is thrown,
     * so nothing stays claimed that the caller was not told of (copies elsewhere found it busy for a
     * whole lease). A release is owner-checked: a key this owner did not hold is left as it is.
     */
    private void failIfAnyFailed(List<Object> replies, List<ClaimRequest> requests, String owner) {
        RedisScripts.Failed failed = null;
        List<IdempotencyKey> mayHold = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            Object reply = replies.get(i);
            if (reply instanceof RedisScripts.Failed f) {
                failed = failed == null || !failed.known() ? f : failed;
                if (!f.known()) {
                    mayHold.add(requests.get(i).key());
                }
            } else if (reply instanceof String text && (text.startsWith("C:") || text.startsWith("c:"))) {
                mayHold.add(requests.get(i).key());
            }
        }
        if (failed == null) {
            return;
        }
        if (!mayHold.isEmpty()) {
            try {
                release(mayHold, owner);
            } catch (ClaimStoreException e) {
                LOG.warn("could not release the {} key(s) a failed claim call may hold; their leases will expire",
                        mayHold.size(), e);
            }
        }
        Throwable cause = failed.cause();
        throw cause instanceof ClaimStoreException store ? store
                : new ClaimStoreException("Redis unavailable or failing: " + RedisScripts.rootMessage(cause), cause);
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
        List<IdempotencyKey> ordered = List.copyOf(keys);
        return scripts.manyAsync(ordered.stream().map(this::redisKey).toList(),
                        (slot, group) -> new RedisScripts.Extra(List.of(),
                                args(slot, "renew", owner, Long.toString(lease.toMillis()))))
                .thenApply(replies -> refused(ordered, replies));
    }

    private static Set<IdempotencyKey> refused(List<IdempotencyKey> keys, List<Object> replies) {
        Set<IdempotencyKey> refused = new HashSet<>();
        for (int i = 0; i < keys.size(); i++) {
            if (((Number) replies.get(i)).longValue() != 1) {
                refused.add(keys.get(i));
            }
        }
        return refused;
    }

    @Override
    public Set<IdempotencyKey> complete(Collection<IdempotencyKey> keys, String owner) {
        return join(completeAsync(keys, owner));
    }

    /**
     * Completes batches whose compact keys all complete now by one write to their batch record, the
     * other keys one by one; a batch record refused (another owner took one of its keys over) has
     * its keys completed one by one, in a second round trip.
     */
    @Override
    public CompletableFuture<Set<IdempotencyKey>> completeAsync(Collection<IdempotencyKey> keys, String owner) {
        Map<String, IdempotencyKey> byRedisKey = new HashMap<>();
        keys.forEach(key -> byRedisKey.put(redisKey(key), key));
        CompactClaims.Plan plan = compact.plan(byRedisKey.keySet(), owner);
        List<String> records = List.copyOf(plan.batches().keySet());
        return completeAsync(plan.single(), plan.ownCompact(), records, owner).whenComplete((replies, failure) -> {
            if (failure != null) {
                // No answer (a timeout, a slot moving): the batches planned whole are known again, so
                // a retry completes their keys as this owner's, wherever their batch records are.
                plan.batches().forEach((record, batchKeys) -> compact.claimed(record, owner, batchKeys));
            }
        }).thenCompose(replies -> {
            Set<IdempotencyKey> refused = new HashSet<>();
            refused(plan.single(), replies, 0).forEach(key -> refused.add(byRedisKey.get(key)));
            List<String> again = new ArrayList<>();
            Map<String, String> stillCompact = new HashMap<>();
            refused(records, replies, plan.single().size()).forEach(record -> plan.batches().get(record).forEach(key -> {
                again.add(key);
                stillCompact.put(key, record);
            }));
            if (again.isEmpty()) {
                return CompletableFuture.completedFuture(refused);
            }
            // Each key that still names this owner's batch is done; a key taken over is refused.
            return completeAsync(again, stillCompact, List.of(), owner).thenApply(more -> {
                refused(again, more, 0).forEach(key -> refused.add(byRedisKey.get(key)));
                return refused;
            });
        });
    }

    /** The names whose reply, from {@code offset} on in {@code replies}, is not 1. */
    private static List<String> refused(List<String> names, List<Object> replies, int offset) {
        List<String> refused = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (((Number) replies.get(offset + i)).longValue() != 1) {
                refused.add(names.get(i));
            }
        }
        return refused;
    }

    /**
     * One completion call: {@code single} keys one by one (those in {@code ownCompact} named with
     * the owner's batch record they are compact under), then whole batch {@code records}.
     */
    private CompletableFuture<List<Object>> completeAsync(List<String> single, Map<String, String> ownCompact,
                                                          List<String> records, String owner) {
        List<String> all = new ArrayList<>(single);
        all.addAll(records);
        return scripts.manyAsync(all, (slot, group) -> {
            StringBuilder flags = new StringBuilder(group.size());
            StringBuilder ids = new StringBuilder();
            for (int i : group) {
                String record = i < single.size() ? ownCompact.get(single.get(i)) : null;
                flags.append(i >= single.size() ? 'b' : record != null ? 'm' : 'k');
                if (record != null) {
                    ids.append(record, record.length() - BatchIds.LENGTH, record.length());
                }
            }
            return new RedisScripts.Extra(List.of(), args(slot, "complete", owner, Long.toString(doneWindowMillis),
                    Long.toString(attemptsWindowMillis), flags.toString(), Long.toString(COMPLETE_WITHIN),
                    ids.toString(), Long.toString(doneWindowMillis + COMPLETE_WITHIN)));
        }).thenApply(replies -> {
            for (int i = 0; i < single.size(); i++) {
                if (((Number) replies.get(i)).longValue() == 1) {
                    compact.changed(single.get(i), owner);
                }
            }
            return replies;
        });
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
    public void release(Collection<IdempotencyKey> keys, String owner) {
        List<String> redisKeys = keys.stream().map(this::redisKey).toList();
        List<Object> replies = scripts.many(redisKeys,
                (slot, group) -> new RedisScripts.Extra(List.of(), args(slot, "release", owner)));
        for (int i = 0; i < redisKeys.size(); i++) {
            if (made(replies.get(i))) {
                compact.changed(redisKeys.get(i), owner);
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
                Long.toString(doneWindowMillis), Long.toString(compensationLease.toMillis())));
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
        try {
            redisson.getKeys().delete(redisKey(key));
        } catch (RedisException e) {
            throw new ClaimStoreException("Redis unavailable deleting " + key, e);
        }
    }

    @Override
    public Optional<ClaimRecord> inspect(IdempotencyKey key) {
        List<Object> reply = one(redisKey(key), RScript.ReturnType.MULTI, "inspect");
        return ClaimRecords.record((String) reply.get(0),
                Duration.ofMillis(Math.max(0, Long.parseLong((String) reply.get(1)))));
    }

    /**
     * Read from the pending-compensation indexes (one per slot group), not by scanning the group's
     * keys: a week of done keys costs nothing here. Entries whose record is no longer pending (it
     * expired, was reset or lost) are dropped as they are found.
     */
    @Override
    public List<KeyRecord> pendingCompensations(String group, int limit) {
        String groupPrefix = prefix + escape(group) + ':';
        List<KeyRecord> pending = new ArrayList<>();
        try {
            RBatch batch = redisson.createBatch();
            List<RFuture<Collection<String>>> indexes = new ArrayList<>();
            for (int slot : scripts.cluster() ? IntStream.range(0, Slots.SLOTS).toArray() : new int[] {-1}) {
                indexes.add(batch.<String>getScoredSortedSet(pendingKey(slot), StringCodec.INSTANCE).readAllAsync());
            }
            batch.execute();
            for (RFuture<Collection<String>> index : indexes) {
                for (String name : index.toCompletableFuture().join()) {
                    Optional<IdempotencyKey> key = name.startsWith(groupPrefix) ? keyOf(group, groupPrefix, name)
                            : Optional.empty();
                    if (key.isEmpty() || pending.size() >= limit) {
                        continue;
                    }
                    Optional<ClaimRecord> record = inspect(key.get());
                    if (record.flatMap(ClaimRecord::compensation).filter(CompensationOutcome::isPending).isPresent()) {
                        pending.add(new KeyRecord(key.get(), record.get()));
                    } else {
                        one(name, RScript.ReturnType.INTEGER, "unindex");
                    }
                }
            }
        } catch (RedisException | CompletionException e) {
            throw new ClaimStoreException("Redis unavailable listing pending compensations of " + group, e);
        }
        return pending;
    }

    /** The key a Redis key of the group names, if it names one. */
    private static Optional<IdempotencyKey> keyOf(String group, String groupPrefix, String name) {
        String rest = name.substring(groupPrefix.length());
        int colon = rest.indexOf(':');
        if (colon < 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(new IdempotencyKey(group, unescape(rest.substring(0, colon)), rest.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            LOG.warn("skipping Redis key {}: {}", name, e.getMessage());
            return Optional.empty();
        }
    }

    @Override
    public List<KeyRecord> deadKeys(String group, int limit) {
        List<KeyRecord> dead = new ArrayList<>();
        String groupPrefix = prefix + escape(group) + ':';
        try {
            Iterable<String> names = redisson.getKeys().getKeys(KeysScanOptions.defaults()
                    .pattern(globEscape(groupPrefix) + "*").chunkSize(SCAN_COUNT));
            for (String name : names) {
                if (dead.size() >= limit) {
                    break;
                }
                Optional<IdempotencyKey> found = keyOf(group, groupPrefix, name);
                if (found.isEmpty()) {
                    continue;
                }
                IdempotencyKey key = found.get();
                try {
                    inspect(key).filter(r -> r.state() == ClaimRecord.State.DEAD)
                            .ifPresent(r -> dead.add(new KeyRecord(key, r)));
                } catch (IllegalArgumentException e) {
                    LOG.warn("skipping Redis key {}: {}", name, e.getMessage());
                }
            }
        } catch (RedisException e) {
            throw new ClaimStoreException("Redis unavailable listing dead keys of " + group, e);
        }
        return dead;
    }

    private static String globEscape(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            if ("*?[]\\".indexOf(c) >= 0) {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }

    private void warnUnlessNoEviction() {
        try {
            List<Map<String, String>> configs = new ArrayList<>();
            if (scripts.cluster()) {
                redisson.getRedisNodes(org.redisson.api.redisnode.RedisNodes.CLUSTER).getMasters()
                        .forEach(m -> configs.add(m.getConfig("maxmemory-policy")));
            } else if (redisson.getConfig().isSingleConfig()) {
                configs.add(redisson.getRedisNodes(org.redisson.api.redisnode.RedisNodes.SINGLE).getInstance()
                        .getConfig("maxmemory-policy"));
            }
            for (Map<String, String> config : configs) {
                String policy = config.get("maxmemory-policy");
                if (policy != null && !policy.equals("noeviction")) {
                    LOG.warn("Redis maxmemory-policy is '{}', not 'noeviction': Redis may evict claim records, "
                            + "and the business check alone will then stand between a redelivery and a second effect",
                            policy);
                }
            }
        } catch (RuntimeException e) {
            LOG.info("could not read Redis maxmemory-policy ({}); make sure it is 'noeviction'", e.getMessage());
        }
    }

    /** Builds a {@link RedisClaimStore}; validates on {@link #build()}. Not thread-safe. */
    public static final class Builder {

        private final RedissonClient redisson;
        private String keyPrefix = "idem:";
        // Done and dead records are remembered for 7 days, the dedup window.
        private Duration doneWindow = Duration.ofDays(7);
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

        /** How long done and dead-lettered keys are remembered. Default 7 days. */
        public Builder doneWindow(Duration doneWindow) {
            this.doneWindow = doneWindow;
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
            RedisClaimStore store = new RedisClaimStore(this);
            store.scripts.load();
            store.warnUnlessNoEviction();
            return store;
        }
    }
}
