package dev.idem.redis;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;

/**
 * What a store knows of the compact claims it wrote (decisions 0033, 0058): per batch record, its
 * owner, the keys still compact in Redis with their places, and which of them it completed by their
 * place. A batch record may be completed whole in one write only when its completion and the earlier
 * ones cover every compact key; a completion covering fewer marks their places, also one write. Any
 * other change to a key (fail, release, count, a claim again) makes it a full record in Redis, and
 * the key leaves its batch here only after Redis answered. Forgetting is always safe: an unknown key
 * is completed on its own. Thread-safe.
 *
 * @param <K> how a key is known here: the store's {@code IdempotencyKey}, whose hash its parts keep,
 *            so that a round of hundreds of keys builds no Redis names to find them
 */
final class CompactClaims<K> {

    // Batches remembered; the oldest is forgotten beyond this (its keys are then completed one by one).
    private static final int MAX_BATCHES = 4_096;
    /** The most keys one batch record holds: a place is two base-62 digits. */
    static final int MAX_PLACES = 62 * 62;
    private static final String DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    // Every place boxed once: a batch of 500 boxed most of its places anew per claim.
    private static final Integer[] PLACES = IntStream.range(0, MAX_PLACES).boxed().toArray(Integer[]::new);

    private static final class Batch<K> {
        final String record;
        final String owner;
        // Keys still compact in Redis, with their places (each key its own).
        final Map<K, Integer> compact;
        // The places of those whose completion by their place was sent (a retry sends it again):
        // a place is here only while its key is compact.
        final BitSet done = new BitSet();
        // Redis refused to mark places or renew by the record (a key taken over or reset, the record
        // lost or too old): the rest go one by one, as the record would be refused again.
        boolean refused;

        Batch(String record, String owner, Map<K, Integer> compact) {
            this.record = record;
            this.owner = owner;
            this.compact = compact;
        }
    }

    /** A place, boxed once for every batch. */
    static Integer place(int place) {
        return place >= 0 && place < MAX_PLACES ? PLACES[place] : Integer.valueOf(place);
    }

    private final Map<K, Batch<K>> byKey = new HashMap<>();
    private final Map<String, Batch<K>> batches = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Batch<K>> eldest) {
            if (size() <= MAX_BATCHES) {
                return false;
            }
            eldest.getValue().compact.keySet().forEach(key -> byKey.remove(key, eldest.getValue()));
            return true;
        }
    };

    /**
     * A completion split. {@code whole}: batch records completed whole, each with every key still
     * compact in it (those completed earlier by their place too) and their places. {@code marked}:
     * batch records some of whose keys complete now by their place, with those keys' places.
     * {@code single}: keys completed one by one; of those, {@code ownCompact} are still compact
     * under a batch of the completing owner, with their compact value (without its leading 'b').
     */
    record Plan<K>(Map<String, Map<K, Integer>> whole, Map<String, Map<K, Integer>> marked,
                   List<K> single, Map<K, String> ownCompact) {
    }

    /**
     * Keys Redis answered as claimed compact, under {@code record}, by {@code owner}, with their
     * places. A {@link HashMap} (or subclass) given here becomes the batch's own and is changed
     * here from then on: the caller hands it over and must not use it after; any other map is copied.
     */
    synchronized void claimed(String record, String owner, Map<K, Integer> places) {
        if (places.isEmpty()) {
            return;
        }
        // Not copied: a copy per claimed batch showed in allocation profiles.
        Batch<K> batch = new Batch<>(record, owner, places instanceof HashMap<K, Integer> own ? own : new HashMap<>(places));
        batch.compact.keySet().forEach(key -> {
            forget(key);
            byKey.put(key, batch);
        });
        batches.put(record, batch);
    }

    /**
     * Redis rewrote the key as a full record for {@code owner} (it answered that the change was
     * made): the key is no longer compact under a batch of {@code owner}'s. A refused change leaves
     * the key here: a key whose batch record Redis could not read is refused and stays compact, and a
     * batch completion must then not cover it. A key of another owner's batch is left alone.
     */
    synchronized void changed(K key, String owner) {
        Batch<K> batch = byKey.get(key);
        if (batch != null && batch.owner.equals(owner)) {
            forget(key);
        }
    }

    private void forget(K key) {
        Batch<K> batch = byKey.remove(key);
        if (batch != null) {
            Integer place = batch.compact.remove(key);
            if (place != null) {
                batch.done.clear(place);
            }
            if (batch.compact.isEmpty()) {
                batches.remove(batch.record);
            }
        }
    }

    /**
     * Splits a completion by {@code owner}. A batch whose compact keys are all in {@code keys} or
     * completed earlier is completed by its record and forgotten here at once; in a batch with keys
     * still to come, the keys complete by their places, and count as completed from now on. Other
     * keys go one by one, and stay known as compact until {@link #changed} says Redis answered.
     */
    synchronized Plan<K> plan(Collection<K> keys, String owner) {
        // Per batch, the places of its keys in this completion: a bit each, where a set of keys cost a
        // node per key in allocation profiles; a key named twice is one place.
        Map<Batch<K>, BitSet> mine = new LinkedHashMap<>();
        List<K> single = new ArrayList<>();
        for (K key : keys) {
            Batch<K> batch = byKey.get(key);
            if (batch == null || !batch.owner.equals(owner)) {
                single.add(key);
            } else {
                mine.computeIfAbsent(batch, b -> new BitSet(b.compact.size()))
                        .set(Objects.requireNonNull(batch.compact.get(key), "a place"));
            }
        }
        Map<String, Map<K, Integer>> whole = new LinkedHashMap<>();
        Map<String, Map<K, Integer>> marked = new LinkedHashMap<>();
        Map<K, String> ownCompact = new HashMap<>();
        mine.forEach((batch, covered) -> {
            if (batch.refused) {
                eachCovered(batch, covered, (key, place) -> {
                    single.add(key);
                    ownCompact.put(key, compactValue(batch.record, place));
                });
                return;
            }
            // Every place covered or done is one of the batch's compact keys' (byKey names a key's
            // batch only while the key is in it, and a place is done only while its key is): as many
            // means all. The usual batch, completed at once, marks no place done.
            boolean all = batch.done.isEmpty() && covered.cardinality() == batch.compact.size();
            if (!all) {
                batch.done.or(covered);
            }
            if (all || batch.done.cardinality() == batch.compact.size()) {
                // The batch is forgotten here at once: its map goes with the plan, not a copy of it.
                whole.put(batch.record, Collections.unmodifiableMap(batch.compact));
                batch.compact.keySet().forEach(byKey::remove);
                batches.remove(batch.record);
            } else {
                Map<K, Integer> places = new HashMap<>(covered.cardinality() * 4 / 3 + 1);
                eachCovered(batch, covered, places::put);
                marked.put(batch.record, places);
            }
        });
        return new Plan<>(whole, marked, single, ownCompact);
    }

    /** The batch's compact keys whose places are in {@code covered}, with their places. */
    private static <K> void eachCovered(Batch<K> batch, BitSet covered, BiConsumer<K, Integer> action) {
        batch.compact.forEach((key, place) -> {
            if (covered.get(place)) {
                action.accept(key, place);
            }
        });
    }

    /**
     * A completion call got no answer: its whole batches are known again, every key sent (a retry of
     * the call completes them whole again); its marks stay sent, and a retry sends them again.
     */
    synchronized void unanswered(Plan<K> plan, String owner) {
        plan.whole().forEach((record, places) -> {
            claimed(record, owner, places);
            Batch<K> batch = batches.get(record);
            if (batch != null) {
                places.values().forEach(batch.done::set);
            }
        });
    }

    /**
     * A renewal split: batch records of {@code owner} each standing for the keys of the call still
     * compact in it ({@code batches}), and the keys to renew one by one ({@code single}).
     */
    record Renewal<K>(Map<String, List<K>> batches, List<K> single) {
    }

    /** Splits a renewal by {@code owner}: keys compact under a batch of the owner's go with their batch record. */
    synchronized Renewal<K> renewal(Collection<K> keys, String owner) {
        Map<String, List<K>> byRecord = new LinkedHashMap<>();
        List<K> single = new ArrayList<>();
        for (K key : keys) {
            Batch<K> batch = byKey.get(key);
            if (batch == null || !batch.owner.equals(owner) || batch.refused) {
                single.add(key);
            } else {
                byRecord.computeIfAbsent(batch.record, r -> new ArrayList<>()).add(key);
            }
        }
        return new Renewal<>(byRecord, single);
    }

    /**
     * Redis refused to mark places in {@code record}, or to renew by it: its keys are marked and
     * renewed one by one from now on (a whole completion is still tried: it is refused the same way).
     */
    synchronized void refused(String record) {
        Batch<K> batch = batches.get(record);
        if (batch != null) {
            batch.refused = true;
        }
    }

    /** A compact key's value without its leading 'b': its batch id (the record's last 9 characters) and place. */
    static String compactValue(String record, int place) {
        return record.substring(record.length() - BatchIds.LENGTH) + placeText(place);
    }

    /** Two base-62 digits. */
    static String placeText(int place) {
        if (place < 0 || place >= MAX_PLACES) {
            throw new IllegalArgumentException("place " + place + " outside 0-" + (MAX_PLACES - 1));
        }
        return new String(new char[] {DIGITS.charAt(place / 62), DIGITS.charAt(place % 62)});
    }
}
