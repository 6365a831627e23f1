package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion call of a {@link RedisClaimStore}: a batch whose compact keys all complete together
 * is completed by one write to its batch record, every other key by its own. Thread-safe.
 */
final class CompletionRound {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);

    private final RedisScripts scripts;
    private final KeySpace names;
    private final CompactClaims compact;
    private final long doneWindowMillis;
    private final long attemptsWindowMillis;

    CompletionRound(RedisScripts scripts, KeySpace names, CompactClaims compact, long doneWindowMillis,
                    long attemptsWindowMillis) {
        this.scripts = scripts;
        this.names = names;
        this.compact = compact;
        this.doneWindowMillis = doneWindowMillis;
        this.attemptsWindowMillis = attemptsWindowMillis;
    }

    /**
     * Completes batches whose compact keys all complete now by one write to their batch record, the
     * other keys one by one; a batch record refused (another owner took one of its keys over) has
     * its keys completed one by one, in a second round trip.
     */
    CompletableFuture<Set<IdempotencyKey>> completeAsync(Collection<IdempotencyKey> keys, String owner) {
        Map<String, IdempotencyKey> byRedisKey = new HashMap<>();
        keys.forEach(key -> byRedisKey.put(names.of(key), key));
        CompactClaims.Plan plan = compact.plan(byRedisKey.keySet(), owner);
        List<String> records = List.copyOf(plan.batches().keySet());
        return completeAsync(plan.single(), plan.ownCompact(), records, owner).whenComplete((replies, failure) -> {
            if (failure != null) {
                // No answer (a timeout, a slot moving): the batches planned whole are known again, so
                // a retry completes their keys as this owner's, wherever their batch records are.
                plan.batches().forEach((record, batchKeys) -> compact.claimed(record, owner, batchKeys));
            }
        }).thenCompose(replies -> {
            warnRestored(plan.single(), replies);
            Set<IdempotencyKey> refused = new HashSet<>();
            refused(plan.single(), replies, 0).forEach(key -> refused.add(byRedisKey.get(key)));
            List<String> again = new ArrayList<>();
            Map<String, String> stillCompact = new HashMap<>();
            refused(records, replies, plan.single().size()).forEach(record -> plan.batches().getOrDefault(record, List.of()).forEach(key -> {
                again.add(key);
                stillCompact.put(key, record);
            }));
            if (again.isEmpty()) {
                return CompletableFuture.completedFuture(refused);
            }
            // Each key that still names this owner's batch is done; a key taken over is refused.
            return completeAsync(again, stillCompact, List.of(), owner).thenApply(more -> {
                warnRestored(again, more);
                refused(again, more, 0).forEach(key -> refused.add(byRedisKey.get(key)));
                return refused;
            });
        });
    }

    /** The names whose reply, from {@code offset} on in {@code replies}, is 0. */
    private static List<String> refused(List<String> names, List<Object> replies, int offset) {
        return replied(names, replies, offset, 0);
    }

    /** The names whose reply, from {@code offset} on in {@code replies}, is {@code reply}. */
    private static List<String> replied(List<String> names, List<Object> replies, int offset, long reply) {
        List<String> matching = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (((Number) replies.get(offset + i)).longValue() == reply) {
                matching.add(names.get(i));
            }
        }
        return matching;
    }

    /** Says which of the first {@code names} had no record left to complete: Redis lost it (decision 0051). */
    private static void warnRestored(List<String> names, List<Object> replies) {
        List<String> restored = replied(names, replies, 0, 2);
        if (!restored.isEmpty()) {
            LOG.warn("{} completion(s) found no claim record (Redis lost it: a failover or a restart) and wrote it "
                    + "done again, e.g. {}; a copy that came in between may have run again", restored.size(), restored.get(0));
        }
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
            return new RedisScripts.Extra(List.of(), names.args(slot, "complete", owner, Long.toString(doneWindowMillis),
                    Long.toString(attemptsWindowMillis), flags.toString(), Long.toString(RedisClaimStore.COMPLETE_WITHIN),
                    ids.toString(), Long.toString(doneWindowMillis + RedisClaimStore.COMPLETE_WITHIN)));
        }).thenApply(replies -> {
            for (int i = 0; i < single.size(); i++) {
                if (((Number) replies.get(i)).longValue() == 1) {
                    compact.changed(single.get(i), owner);
                }
            }
            return replies;
        });
    }
}
