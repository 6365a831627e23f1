package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.CompensationOutcome;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;
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
 * The operator's listings of a {@link RedisClaimStore}: keys with a compensation pending, read from
 * their indexes, and dead-lettered keys, found by scanning a group's keys. Thread-safe.
 */
final class ClaimListings {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClaimStore.class);
    // Keys listed per SCAN call.
    private static final int SCAN_COUNT = 1_000;

    private final RedisClaimStore store;
    private final RedissonClient redisson;
    private final RedisScripts scripts;
    private final KeySpace keys;

    ClaimListings(RedisClaimStore store, RedissonClient redisson, RedisScripts scripts, KeySpace keys) {
        this.store = store;
        this.redisson = redisson;
        this.scripts = scripts;
        this.keys = keys;
    }

    /**
     * Read from the pending-compensation indexes (one per slot group), not by scanning the group's
     * keys: a week of done keys costs nothing here. Entries whose record is no longer pending (it
     * expired, was reset or lost) are dropped as they are found.
     */
    List<ClaimAdmin.KeyRecord> pendingCompensations(String group, int limit) {
        List<ClaimAdmin.KeyRecord> pending = new ArrayList<>();
        try {
            RBatch batch = redisson.createBatch();
            List<RFuture<Collection<String>>> indexes = new ArrayList<>();
            for (int slot : scripts.cluster() ? IntStream.range(0, Slots.SLOTS).toArray() : new int[] {-1}) {
                indexes.add(batch.<String>getScoredSortedSet(keys.pendingKey(slot), StringCodec.INSTANCE).readAllAsync());
            }
            batch.execute();
            for (RFuture<Collection<String>> index : indexes) {
                for (String name : index.toCompletableFuture().join()) {
                    Optional<IdempotencyKey> key = keys.keyOf(group, name);
                    if (key.isEmpty() || pending.size() >= limit) {
                        continue;
                    }
                    Optional<ClaimRecord> record = store.inspect(key.get());
                    if (record.flatMap(ClaimRecord::compensation).filter(CompensationOutcome::isPending).isPresent()) {
                        pending.add(new ClaimAdmin.KeyRecord(key.get(), record.get()));
                    } else {
                        store.one(name, RScript.ReturnType.INTEGER, "unindex");
                    }
                }
            }
        } catch (RedisException | CompletionException e) {
            throw new ClaimStoreException("Redis unavailable listing pending compensations of " + group, e);
        }
        return pending;
    }

    List<ClaimAdmin.KeyRecord> deadKeys(String group, int limit) {
        List<ClaimAdmin.KeyRecord> dead = new ArrayList<>();
        String groupPrefix = keys.groupPrefix(group);
        try {
            Iterable<String> names = redisson.getKeys().getKeys(KeysScanOptions.defaults()
                    .pattern(globEscape(groupPrefix) + "*").chunkSize(SCAN_COUNT));
            for (String name : names) {
                if (dead.size() >= limit) {
                    break;
                }
                Optional<IdempotencyKey> found = keys.keyOf(group, name);
                if (found.isEmpty()) {
                    continue;
                }
                IdempotencyKey key = found.get();
                try {
                    store.inspect(key).filter(r -> r.state() == ClaimRecord.State.DEAD)
                            .ifPresent(r -> dead.add(new ClaimAdmin.KeyRecord(key, r)));
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
}
