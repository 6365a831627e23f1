package dev.idem.core.spi;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** The answer of a claim on one key. Immutable. */
public sealed interface Claim {

    /** The key claimed. */
    IdempotencyKey key();

    /** The caller now holds the key under a lease: a claim to run, or a compensation to finish. */
    default boolean held() {
        return this instanceof Claimed || this instanceof Compensate;
    }

    /**
     * The caller now owns the key until its lease ends. Its attempt is uncounted: the store counts
     * it with its outcome ({@link ClaimStore#fail}, {@link ClaimStore#doom}), or earlier with
     * {@link ClaimStore#count} when the claim was taken over from an abandoned owner.
     *
     * @param fence            fencing token, strictly increasing per key
     * @param attempt          the attempt number this run will be, from 1
     * @param failures         failures recorded so far
     * @param abandoned        the previous owner abandoned its claim (crashed or vanished): count the
     *                         attempt with {@link ClaimStore#count} before the handler runs, so a crash
     *                         loop is counted
     * @param fresh            no record existed: the first delivery, or the store lost the record
     * @param firstFailureAt   when the first failure was recorded, if any
     * @param lastError        the last recorded failure ("class: message"), if any
     * @param deadLetterReason set when an earlier owner decided to dead-letter the key but did not
     *                         finish: publish the dead letter with this reason, without running the handler
     */
    record Claimed(IdempotencyKey key, long fence, int attempt, int failures, boolean abandoned, boolean fresh,
                   Optional<Instant> firstFailureAt, Optional<String> lastError, Optional<String> deadLetterReason)
            implements Claim {

        /**
         * Taken over from an owner that crashed in its run (not this owner's own claim asked again):
         * that run is counted before the handler, or with the release if the message never runs.
         */
        public boolean takenOverFromCrash() {
            return abandoned && !fresh;
        }
    }

    /** The effect is recorded as done within the dedup window. */
    record Done(IdempotencyKey key) implements Claim {
    }

    /** The key was dead-lettered earlier and its compensation is finished or held by a live owner. */
    record Dead(IdempotencyKey key) implements Claim {
    }

    /**
     * The key was dead-lettered earlier, but its compensation was cut off (its owner crashed): the
     * caller now holds the compensation under a lease, and records its outcome with
     * {@link ClaimStore#recordCompensation}.
     *
     * @param fence     fencing token of the claim that dead-lettered the key: the same for every owner
     *                  that takes this compensation over, so it names this dead-lettering
     * @param attempts  attempts recorded
     * @param lastError the last failure, if any
     * @param reason    why the key was dead-lettered
     */
    record Compensate(IdempotencyKey key, long fence, int attempts, Optional<String> lastError, String reason)
            implements Claim {
    }

    /**
     * Another owner holds a live lease, or a dead letter that could not be published waits for its
     * backoff.
     *
     * @param remaining time left
     */
    record Busy(IdempotencyKey key, Duration remaining) implements Claim {
    }

    /**
     * The store holds a value for the key that is not a claim record (written by something else under
     * the key prefix): the key cannot be processed until an operator removes it.
     *
     * @param detail what was found, for the log
     */
    record Unreadable(IdempotencyKey key, String detail) implements Claim {
    }
}
