package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.redisson.api.RScript;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim call of a {@link RedisClaimStore}: a batch's keys claimed in one script call per slot
 * group, fresh keys of a large enough group as compact records of one batch record; keys of a slot
 * being migrated claimed one by one; whole or nothing to the caller (a failed call releases what it
 * may hold). Thread-safe.
 */
final class ClaimRound {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);
    // How long a slot that answered TRYAGAIN is taken for one being migrated: its keys go one by one.
    private static final Duration MIGRATING_FOR = Duration.ofSeconds(10);

    private final RedisClaimStore store;
    private final RedisScripts scripts;
    private final KeySpace keys;
    private final CompactClaims<IdempotencyKey> compact;
    private final long doneWindowMillis;
    private final long attemptsWindowMillis;
    private final int minCompactBatch;
    // Slots that answered TRYAGAIN lately, with when (System.nanoTime) that stops being assumed.
    private final Map<Integer, Long> migrating = new ConcurrentHashMap<>();
    private final LateReleases late;
    // Said once per store: a call too large for a batch record.
    private final AtomicBoolean tooLargeSaid = new AtomicBoolean();

    ClaimRound(RedisClaimStore store, RedisScripts scripts, KeySpace keys, CompactClaims<IdempotencyKey> compact,
               long doneWindowMillis, long attemptsWindowMillis, int minCompactBatch) {
        this.store = store;
        this.late = new LateReleases(store);
        this.scripts = scripts;
        this.keys = keys;
        this.compact = compact;
        this.doneWindowMillis = doneWindowMillis;
        this.attemptsWindowMillis = attemptsWindowMillis;
        this.minCompactBatch = minCompactBatch;
    }

    List<Claim> claim(List<ClaimRequest> requests, String owner, Duration lease) {
        List<String> names = requests.stream().map(r -> keys.of(r.key())).toList();
        long window = Math.max(attemptsWindowMillis, lease.toMillis() * 2);
        String compactWindow = Long.toString(doneWindowMillis + Math.max(RedisClaimStore.COMPLETE_WITHIN, lease.toMillis() * 2));
        Map<Integer, String> batchRecords = new ConcurrentHashMap<>();
        // A key's place among its slot group's keys: its place in the group's batch record.
        // Written before each group's call is sent (on this thread, as each() runs), read after every
        // call answered; -1 for a key whose group sent no batch id.
        int[] places = new int[names.size()];
        Arrays.fill(places, -1);
        // Keys of a slot seen being migrated go one by one; the others in one call per slot.
        List<Integer> grouped = new ArrayList<>(names.size());
        List<Integer> alone = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            (migrating.isEmpty() || !migrating(keys.slotOf(names.get(i))) ? grouped : alone).add(i);
        }
        List<Object> replies = new ArrayList<>(Collections.nCopies(names.size(), null));
        List<Object> groupReplies = grouped.isEmpty() ? List.of()
                : scripts.each(grouped.stream().map(names::get).toList(), (slot, group) -> {
            long fresh = group.stream().filter(i -> requests.get(grouped.get(i)).attemptFloor() <= 1).count();
            boolean compactPays = fresh >= minCompactBatch;
            if (compactPays && group.size() > CompactClaims.MAX_PLACES && tooLargeSaid.compareAndSet(false, true)) {
                LOG.warn("a claim call of {} keys in one Redis slot writes full records, two writes per message: a batch "
                        + "record holds at most {} keys (lower max.poll.records or the batch size)", group.size(),
                        CompactClaims.MAX_PLACES);
            }
            String id = compactPays && group.size() <= CompactClaims.MAX_PLACES ? BatchIds.next() : "";
            batchRecords.put(slot, keys.batchPrefix(slot) + id);
            for (int place = 0; place < group.size(); place++) {
                places[grouped.get(group.get(place))] = place;
            }
            List<Object> claimArgs = new ArrayList<>(List.of("claim", owner, Long.toString(lease.toMillis()),
                    Long.toString(window), compactWindow, id));
            StringBuilder perKey = new StringBuilder(group.size() * 16);
            for (int i : group) {
                appendFloorAndBorn(perKey, requests.get(grouped.get(i)));
            }
            claimArgs.add(perKey.toString());
            return new RedisScripts.Extra(List.of(keys.epochKey(slot), batchRecords.get(slot)),
                    keys.args(slot, claimArgs.toArray()));
        });
        for (int g = 0; g < grouped.size(); g++) {
            Object reply = groupReplies.get(g);
            if (reply instanceof RedisScripts.Failed failed && (failed.tryAgain() || failed.refusedElsewhere())) {
                // A slot being migrated, or a call left unanswered because Redis refused another call
                // of the same batch (TRYAGAIN on another slot): its keys claimed again alone, which a
                // claim by the same owner may be (it keeps its claim). A call whose reply is missing
                // because Redis did not answer (a timeout, a node lost) is not: one by one, each key
                // would wait its own timeout; the claim fails, and what the call may hold is released.
                if (failed.tryAgain()) {
                    migrating.put(keys.slotOf(names.get(grouped.get(g))), System.nanoTime() + MIGRATING_FOR.toNanos());
                }
                alone.add(grouped.get(g));
            } else {
                replies.set(grouped.get(g), reply);
            }
        }
        for (int i : alone) {
            replies.set(i, claimAlone(names.get(i), requests.get(i), owner, lease, window, compactWindow));
        }
        failIfAnyFailed(replies, requests, owner, lease);
        Map<Integer, Map<IdempotencyKey, Integer>> compactBySlot = new HashMap<>();
        // A slot's fresh compact claims share one reply, said in full for the first of them ('c' alone
        // after): each() makes one call per slot and puts its replies back in key order, and a key
        // claimed alone (claim1) is never compact. Anything else is a defect, refused before any key
        // is known as compact or handed to the caller (the claims then lapse with their lease).
        Map<Integer, String> compactReply = new HashMap<>();
        List<IdempotencyKey> full = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String reply = (String) replies.get(i);
            if (reply.startsWith("c")) {
                int slot = keys.slotOf(names.get(i));
                compactBySlot.computeIfAbsent(slot, s -> new HashMap<>()).putIfAbsent(requests.get(i).key(), CompactClaims.place(places[i]));
                String claimed = reply.length() > 1 ? "C" + reply.substring(1) : compactReply.get(slot);
                if (claimed == null || places[i] < 0) {
                    throw new ClaimStoreException("unexpected compact claim reply '" + reply + "' for " + names.get(i)
                            + (places[i] < 0 ? " (no place sent)" : " (before a full one)"), null);
                }
                compactReply.put(slot, claimed);
                replies.set(i, claimed);
            } else if (reply.startsWith("C:") || reply.startsWith("K:")) {
                full.add(requests.get(i).key());
            }
        }
        compactBySlot.forEach((slot, compactKeys) -> compact.claimed(Objects.requireNonNull(batchRecords.get(slot), "batch record"), owner, compactKeys));
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
                        names.get(i), claim.key(), keys.prefix());
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
            List<Object> reply = store.one(redisKey, RScript.ReturnType.MULTI, "claim1", owner,
                    Long.toString(lease.toMillis()), Long.toString(window), compactWindow, "", perKey.toString(),
                    keys.epochKey(keys.slotOf(redisKey)));
            return reply.get(0);
        } catch (ClaimStoreException e) {
            return RedisScripts.Failed.of(e);
        }
    }

    /**
     * A claim call is whole or nothing to its caller: when a slot's call failed, every key the call
     * may hold (claimed, a compensation taken over, or whose reply is missing) is released before the
     * failure is thrown, so nothing stays claimed that the caller was not told of (copies elsewhere
     * found it busy for a whole lease). A release is owner-checked, and the owner is this call's alone:
     * a key this owner does not hold is left as it is. A takeover of a crashed owner, or a key whose
     * reply is missing (it may be one), is left abandoned for the next claim to count, never released
     * as if no run had crashed. A call whose reply is missing may still run (a paused or slow Redis),
     * so a release that fails is tried again in the background until the lease would have ended.
     */
    private void failIfAnyFailed(List<Object> replies, List<ClaimRequest> requests, String owner, Duration lease) {
        if (replies.stream().noneMatch(RedisScripts.Failed.class::isInstance)) {
            return;
        }
        RedisScripts.Failed failed = null;
        List<IdempotencyKey> mayHold = new ArrayList<>();
        Set<IdempotencyKey> crashed = new HashSet<>();
        for (int i = 0; i < replies.size(); i++) {
            Object reply = replies.get(i);
            IdempotencyKey key = requests.get(i).key();
            if (reply instanceof RedisScripts.Failed f) {
                failed = failed == null || !failed.known() ? f : failed;
                // Its reply is missing, or an error reply may have come after some of its writes.
                mayHold.add(key);
                crashed.add(key);
            } else if (reply instanceof String text && text.equals("c")) {
                mayHold.add(key);   // a fresh compact claim
            } else if (reply instanceof String text && (text.startsWith("C:") || text.startsWith("c:"))) {
                mayHold.add(key);
                if (ClaimRecords.claim(key, "C" + text.substring(1)) instanceof Claim.Claimed claimed
                        && claimed.takenOverFromCrash()) {
                    crashed.add(key);
                }
            } else if (reply instanceof String text && text.startsWith("K:")) {
                mayHold.add(key);
            }
        }
        if (failed == null) {
            return;
        }
        if (!mayHold.isEmpty()) {
            late.release(mayHold, crashed, owner, lease);
        }
        Throwable cause = failed.cause();
        throw cause instanceof ClaimStoreException store ? store
                : new ClaimStoreException("Redis unavailable or failing: " + RedisScripts.rootMessage(cause), cause);
    }
}
