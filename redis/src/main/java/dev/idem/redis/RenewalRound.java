package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The renewal call of a {@link RedisClaimStore}: keys compact under a batch of the renewing owner's
 * are renewed by one write to their batch record (decision 0058), the others one by one; a batch
 * record refused (a key of it taken over or reset, the record lost or older than an hour) has its
 * keys renewed one by one, in a second round trip, which says which are lost, and from then on. Thread-safe.
 */
final class RenewalRound {

    private final RedisScripts scripts;
    private final KeySpace names;
    private final CompactClaims<IdempotencyKey> compact;

    RenewalRound(RedisScripts scripts, KeySpace names, CompactClaims<IdempotencyKey> compact) {
        this.scripts = scripts;
        this.names = names;
        this.compact = compact;
    }

    /** Renews {@code keys}; the keys whose lease is lost (another owner holds them, or nobody). */
    CompletableFuture<Set<IdempotencyKey>> renewAsync(Collection<IdempotencyKey> keys, String owner, Duration lease) {
        CompactClaims.Renewal<IdempotencyKey> plan = compact.renewal(keys, owner);
        List<String> records = List.copyOf(plan.batches().keySet());
        List<IdempotencyKey> single = plan.single();
        return renewAsync(single, records, owner, lease).thenCompose(replies -> {
            Set<IdempotencyKey> lost = new HashSet<>();
            for (int i = 0; i < single.size(); i++) {
                if (((Number) replies.get(i)).longValue() != 1) {
                    lost.add(single.get(i));
                }
            }
            List<IdempotencyKey> again = new ArrayList<>();
            for (int i = 0; i < records.size(); i++) {
                if (((Number) replies.get(single.size() + i)).longValue() != 1) {
                    again.addAll(plan.batches().get(records.get(i)));
                    compact.refused(records.get(i));
                }
            }
            if (again.isEmpty()) {
                return CompletableFuture.completedFuture(lost);
            }
            return renewAsync(again, List.of(), owner, lease).thenApply(more -> {
                for (int i = 0; i < again.size(); i++) {
                    if (((Number) more.get(i)).longValue() != 1) {
                        lost.add(again.get(i));
                    }
                }
                return lost;
            });
        });
    }

    /** One renewal call: {@code single} keys one by one, then batch {@code records}. */
    private CompletableFuture<List<Object>> renewAsync(List<IdempotencyKey> single, List<String> records, String owner,
                                                       Duration lease) {
        List<String> all = new ArrayList<>(single.size() + records.size());
        single.forEach(key -> all.add(names.of(key)));
        all.addAll(records);
        return scripts.manyAsync(all, (slot, group) -> {
            StringBuilder flags = new StringBuilder(group.size());
            for (int i : group) {
                flags.append(i < single.size() ? 'k' : 'r');
            }
            return new RedisScripts.Extra(List.of(), names.args(slot, "renew", owner, Long.toString(lease.toMillis()),
                    flags.toString(), Long.toString(RedisClaimStore.COMPLETE_WITHIN)));
        });
    }
}
