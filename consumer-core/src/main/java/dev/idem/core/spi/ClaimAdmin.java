package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.util.List;
import java.util.Optional;

/**
 * The operator's side of a claim store (the command line, tests): read a key's record, list dead
 * keys and unfinished compensations, forget a key. Never used by the processor. Thread-safe.
 */
public interface ClaimAdmin {

    /** The record of a key, if any. */
    Optional<ClaimRecord> inspect(IdempotencyKey key);

    /**
     * Forgets a key entirely, e.g. so that a replayed dead letter runs once. A completion of a run
     * that began before the reset, still on its way, is refused for five minutes after it (it would
     * otherwise write the key done again, since a completion writes done a key with no record).
     */
    void reset(IdempotencyKey key);

    /**
     * Dead-lettered keys of {@code group} (with their records), at most {@code limit}, in no
     * particular order.
     */
    List<KeyRecord> deadKeys(String group, int limit);

    /**
     * Dead-lettered keys of {@code group} whose compensation has no outcome yet (still running, or cut
     * off by a crash), at most {@code limit}.
     */
    default List<KeyRecord> pendingCompensations(String group, int limit) {
        return deadKeys(group, Integer.MAX_VALUE).stream()
                .filter(k -> k.record().compensation().filter(CompensationOutcome::isPending).isPresent())
                .limit(limit).toList();
    }

    /**
     * A key and its record.
     *
     * @param key    the key
     * @param record its record
     */
    record KeyRecord(IdempotencyKey key, ClaimRecord record) {
    }
}
