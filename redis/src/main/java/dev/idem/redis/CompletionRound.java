package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion call of a {@link RedisClaimStore}: a batch whose compact keys have all completed is
 * completed by one write to its batch record, keys of a batch completing on the way by one write
 * marking their places in it (decision 0058), every other key by its own. Thread-safe.
 */
final class CompletionRound {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);

    private final RedisScripts scripts;
    private final KeySpace names;
    private final CompactClaims<IdempotencyKey> compact;
    private final long doneWindowMillis;
    private final long attemptsWindowMillis;

    CompletionRound(RedisScripts scripts, KeySpace names, CompactClaims<IdempotencyKey> compact, long doneWindowMillis,
                    long attemptsWindowMillis) {
        this.scripts = scripts;
        this.names = names;
        this.compact = compact;
        this.doneWindowMillis = doneWindowMillis;
        this.attemptsWindowMillis = attemptsWindowMillis;
    }

    /**
     * Completes batches whose compact keys have all completed by now by one write to their batch
     * record, keys of a batch with keys still to come by one write marking their places in it, the
     * other keys one by one; a batch record refused (another owner took one of its keys over) has its
     * keys completed one by one, in a second round trip.
     */
    CompletableFuture<Set<IdempotencyKey>> completeAsync(Collection<IdempotencyKey> asked, String owner) {
        // The keys as they are now: the second round (below) reads them after the caller got its future.
        List<IdempotencyKey> keys = List.copyOf(asked);
        CompactClaims.Plan<IdempotencyKey> plan = compact.plan(keys, owner);
        List<String> records = new ArrayList<>(plan.whole().keySet());
        records.addAll(plan.marked().keySet());
        List<IdempotencyKey> single = plan.single();
        return completeAsync(single, plan.ownCompact(), plan, owner).whenComplete((replies, failure) -> {
            if (failure != null) {
                // No answer (a timeout, a slot moving): the batches planned are known again, so a
                // retry completes their keys as this owner's, wherever their batch records are.
                compact.unanswered(plan, owner);
            }
        }).thenCompose(replies -> {
            warnRestored(single, replies);
            Set<IdempotencyKey> refused = new HashSet<>(refused(single, replies, 0));
            List<IdempotencyKey> again = new ArrayList<>();
            Map<IdempotencyKey, String> stillCompact = new HashMap<>();
            refused(records, replies, single.size()).forEach(record -> {
                Map<IdempotencyKey, Integer> places = plan.whole().get(record);
                if (places == null) {
                    places = Objects.requireNonNull(plan.marked().get(record), "a record of the plan");
                    compact.refused(record);
                }
                places.forEach((key, place) -> {
                    again.add(key);
                    stillCompact.put(key, CompactClaims.compactValue(record, place));
                });
            });
            if (again.isEmpty()) {
                return CompletableFuture.completedFuture(refused);
            }
            // Each key that still names this owner's batch is done; a key taken over is refused. A
            // refused whole batch's keys completed earlier by their place go again too (their batch
            // record may be lost: decision 0051).
            Set<IdempotencyKey> inCall = new HashSet<>(keys);
            return completeAsync(again, stillCompact, null, owner).thenApply(more -> {
                warnRestored(again, more);
                List<IdempotencyKey> earlier = new ArrayList<>();
                refused(again, more, 0).forEach(key -> (inCall.contains(key) ? refused : earlier).add(key));
                if (!earlier.isEmpty()) {
                    LOG.warn("{} key(s) completed earlier by their place in a batch record were refused when their "
                            + "batch completed (another owner took them over, or an operator reset them), e.g. {}",
                            earlier.size(), earlier.get(0));
                }
                return refused;
            });
        });
    }

    /** The items whose reply, from {@code offset} on in {@code replies}, is 0. */
    private static <T> List<T> refused(List<T> names, List<Object> replies, int offset) {
        return replied(names, replies, offset, 0);
    }

    /** The items whose reply, from {@code offset} on in {@code replies}, is {@code reply}. */
    private static <T> List<T> replied(List<T> names, List<Object> replies, int offset, long reply) {
        List<T> matching = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (((Number) replies.get(offset + i)).longValue() == reply) {
                matching.add(names.get(i));
            }
        }
        return matching;
    }

    /** Says which of the first {@code names} had no record left to complete: Redis lost it (decision 0051). */
    private static void warnRestored(List<IdempotencyKey> names, List<Object> replies) {
        List<IdempotencyKey> restored = replied(names, replies, 0, 2);
        if (!restored.isEmpty()) {
            LOG.warn("{} completion(s) found no claim record (Redis lost it: a failover or a restart) and wrote it "
                    + "done again, e.g. {}; a copy that came in between may have run again", restored.size(), restored.get(0));
        }
    }

    /**
     * One completion call: {@code single} keys one by one (those in {@code ownCompact} named with
     * their compact value under the owner's batch), then the plan's whole batch records, then its
     * batch records with places to mark.
     */
    private CompletableFuture<List<Object>> completeAsync(List<IdempotencyKey> single,
                                                          Map<IdempotencyKey, String> ownCompact,
                                                          CompactClaims.@Nullable Plan<IdempotencyKey> plan, String owner) {
        List<String> all = new ArrayList<>(single.size());
        single.forEach(key -> all.add(names.of(key)));
        int wholeEnd = single.size();
        if (plan != null) {
            all.addAll(plan.whole().keySet());
            wholeEnd = all.size();
            all.addAll(plan.marked().keySet());
        }
        int wholeFrom = single.size();
        int marksFrom = wholeEnd;
        return scripts.manyAsync(all, (slot, group) -> {
            StringBuilder flags = new StringBuilder(group.size());
            StringBuilder ids = new StringBuilder();
            StringBuilder places = new StringBuilder();
            for (int i : group) {
                if (i < wholeFrom) {
                    String value = ownCompact.get(single.get(i));
                    flags.append(value != null ? 'm' : 'k');
                    if (value != null) {
                        ids.append(value);
                    }
                } else if (i < marksFrom) {
                    flags.append('b');
                } else {
                    flags.append('p');
                    if (!places.isEmpty()) {
                        places.append(',');
                    }
                    Objects.requireNonNull(Objects.requireNonNull(plan).marked().get(all.get(i))).values()
                            .forEach(place -> places.append(CompactClaims.placeText(place)));
                }
            }
            return new RedisScripts.Extra(List.of(), names.args(slot, "complete", owner, Long.toString(doneWindowMillis),
                    Long.toString(attemptsWindowMillis), flags.toString(), Long.toString(RedisClaimStore.COMPLETE_WITHIN),
                    ids.toString(), Long.toString(doneWindowMillis + RedisClaimStore.COMPLETE_WITHIN),
                    places.toString()));
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
