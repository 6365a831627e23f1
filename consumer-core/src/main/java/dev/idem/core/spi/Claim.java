package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** The answer of a claim attempt on one key. Immutable. */
public sealed interface Claim {

    /** The key claimed. */
    IdempotencyKey key();

    /**
     * The caller now owns the key until its lease ends.
     *
     * @param fence          fencing token, strictly increasing per key
     * @param attempt        the attempt number this run will be, from 1
     * @param failures       failures recorded so far
     * @param suspect        the previous owner abandoned its claim (crashed or vanished): a tentative
     *                       claim must be firmed with {@link ClaimStore#start} before the handler runs,
     *                       so that a crash loop is counted
     * @param fresh          no record existed: the first delivery, or Redis lost the record
     * @param firstFailureAt when the first failure was recorded, if any
     */
    record Claimed(IdempotencyKey key, long fence, int attempt, int failures, boolean suspect, boolean fresh,
                   Optional<Instant> firstFailureAt) implements Claim {
    }

    /** The effect is recorded as done within the dedup window. */
    record Done(IdempotencyKey key) implements Claim {
    }

    /** The key was dead-lettered earlier. */
    record Dead(IdempotencyKey key) implements Claim {
    }

    /**
     * Another owner holds a live lease.
     *
     * @param remaining time left on that lease
     */
    record Busy(IdempotencyKey key, Duration remaining) implements Claim {
    }
}
