package dev.idem.core.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * What a claim store holds for one key, for inspection (tests, the command line). Immutable.
 *
 * @param state            CLAIMED, FAILED, DONE or DEAD
 * @param owner            owner token while CLAIMED, or of the compensation while it runs
 * @param fence            last fencing token
 * @param attempts         counted handler attempts
 * @param failures         recorded failures
 * @param lastError        class and message of the last failure
 * @param compensation     where a dead-lettered key's compensation stands
 * @param deadLetterReason why the key is (to be) dead-lettered
 * @param timeToLive       time until the record expires
 */
public record ClaimRecord(State state, Optional<String> owner, long fence, int attempts, int failures,
                          Optional<String> lastError, Optional<CompensationOutcome> compensation,
                          Optional<String> deadLetterReason, Duration timeToLive) {

    /** The states of a claim record. */
    public enum State { CLAIMED, FAILED, DONE, DEAD }
}
