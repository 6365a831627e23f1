package dev.idem.core;

import dev.idem.core.spi.CompensationOutcome;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes compensation outcomes to the ledger ({@link EffectLedger#compensated}), with a few
 * tries, and remembers the dead keys whose write failed: their copies write it before they are
 * acknowledged (decision 0036). Thread-safe.
 */
final class CompensationRecords {

    private static final Logger LOG = LoggerFactory.getLogger(CompensationRecords.class);
    // Tries of a write, 100 then 200 ms apart: a short blip passes, and the consumer thread waits at
    // most 0.3 s for a database that is down.
    private static final int WRITES = 3;
    private static final Duration RETRY = Duration.ofMillis(100);
    // Far more dead keys than fail to be recorded at once; a key forgotten is acknowledged as before.
    private static final int MAX_UNRECORDED = 10_000;

    private final EffectLedger<?> check;
    private final Map<IdempotencyKey, CompensationOutcome> unrecorded = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<IdempotencyKey, CompensationOutcome> eldest) {
                    return size() > MAX_UNRECORDED;
                }
            });

    CompensationRecords(EffectLedger<?> check) {
        this.check = check;
    }

    /**
     * The compensation's outcome in the system of record, as durable as the dead letter: a Redis loss
     * (or a replay that resets the claim) must not repeat the compensation.
     *
     * @return whether it was written
     */
    boolean write(DeadLetter letter, CompensationOutcome outcome) {
        for (int attempt = 1; ; attempt++) {
            try {
                check.compensated(letter, outcome);
                return true;
            } catch (Exception e) {
                if (attempt >= WRITES) {
                    LOG.warn("compensation outcome '{}' for {} could not be recorded by the business check ({} tries); "
                            + "not acknowledging: a copy records it", outcome, letter.key(), attempt, e);
                    return false;
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(RETRY.toMillis() * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    LOG.warn("compensation outcome '{}' for {} not recorded by the business check: interrupted",
                            outcome, letter.key(), e);
                    return false;
                }
            }
        }
    }

    /** The key's compensation ran with {@code outcome} but its write failed: its copies write it. */
    void unwritten(IdempotencyKey key, CompensationOutcome outcome) {
        unrecorded.put(key, outcome);
    }

    /** The outcome of the key's compensation, when it ran here and its write is still to be done. */
    Optional<CompensationOutcome> unwritten(IdempotencyKey key) {
        return Optional.ofNullable(unrecorded.get(key));
    }

    /** The key's write is done, or given up. */
    void settled(IdempotencyKey key) {
        unrecorded.remove(key);
    }
}
