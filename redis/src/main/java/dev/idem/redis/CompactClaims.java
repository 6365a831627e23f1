package dev.idem.redis;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a store knows of the compact claims it wrote (docs/decisions/0033): per batch record, its
 * owner and the keys still compact in Redis. A batch record may be completed in one write only when
 * the completion covers every one of them; any other change to a key (fail, release, count, a claim
 * again) makes it a full record in Redis, and the key leaves its batch here only after Redis
 * answered. Forgetting is always safe: an unknown key is completed on its own. Thread-safe.
 */
final class CompactClaims {

    // Batches remembered; the oldest is forgotten beyond this (its keys are then completed one by one).
    private static final int MAX_BATCHES = 4_096;

    private static final class Batch {
        final String record;
        final String owner;
        final Set<String> compact = new HashSet<>();

        Batch(String record, String owner) {
            this.record = record;
            this.owner = owner;
        }
    }

    private final Map<String, Batch> byKey = new HashMap<>();
    private final Map<String, Batch> batches = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Batch> eldest) {
            if (size() <= MAX_BATCHES) {
                return false;
            }
            eldest.getValue().compact.forEach(key -> byKey.remove(key, eldest.getValue()));
            return true;
        }
    };

    /**
     * A completion split: batch records each covering all their compact keys ({@code batches}, with
     * those keys), and the keys to complete one by one; of those, the ones still compact under a
     * batch of the completing owner, with that batch's record ({@code ownCompact}).
     */
    record Plan(Map<String, List<String>> batches, List<String> single, Map<String, String> ownCompact) {
    }

    /** Keys Redis answered as claimed compact, under {@code record}, by {@code owner}. */
    synchronized void claimed(String record, String owner, Collection<String> keys) {
        if (keys.isEmpty()) {
            return;
        }
        Batch batch = new Batch(record, owner);
        for (String key : keys) {
            forget(key);
            batch.compact.add(key);
            byKey.put(key, batch);
        }
        batches.put(record, batch);
    }

    /**
     * Redis rewrote the key as a full record for {@code owner} (it answered that the change was
     * made): the key is no longer compact under a batch of {@code owner}'s. A refused change leaves
     * the key here: a key whose batch record Redis could not read is refused and stays compact, and a
     * batch completion must then not cover it. A key of another owner's batch is left alone.
     */
    synchronized void changed(String key, String owner) {
        Batch batch = byKey.get(key);
        if (batch != null && batch.owner.equals(owner)) {
            forget(key);
        }
    }

    private void forget(String key) {
        Batch batch = byKey.remove(key);
        if (batch != null) {
            batch.compact.remove(key);
            if (batch.compact.isEmpty()) {
                batches.remove(batch.record);
            }
        }
    }

    /**
     * Splits a completion by {@code owner}. A batch whose compact keys are all in {@code keys} is
     * completed by its record and forgotten here at once; the other keys go one by one, and stay
     * known as compact until {@link #changed} says Redis answered.
     */
    synchronized Plan plan(Collection<String> keys, String owner) {
        Map<Batch, List<String>> mine = new LinkedHashMap<>();
        List<String> single = new ArrayList<>();
        Map<String, String> ownCompact = new HashMap<>();
        for (String key : keys) {
            Batch batch = byKey.get(key);
            if (batch == null || !batch.owner.equals(owner)) {
                single.add(key);
            } else {
                mine.computeIfAbsent(batch, b -> new ArrayList<>()).add(key);
            }
        }
        Map<String, List<String>> whole = new LinkedHashMap<>();
        // Every key in covered is one of its batch's compact keys: as many distinct ones means all.
        mine.forEach((batch, covered) -> {
            if (new HashSet<>(covered).size() == batch.compact.size()) {
                whole.put(batch.record, covered);
                batch.compact.forEach(byKey::remove);
                batches.remove(batch.record);
            } else {
                single.addAll(covered);
                covered.forEach(key -> ownCompact.put(key, batch.record));
            }
        });
        return new Plan(whole, single, ownCompact);
    }
}
