package dev.idem.core.spi;

import java.time.Instant;

/**
 * The durable counts after a failure was recorded.
 *
 * @param attempts       handler attempts so far
 * @param failures       failures so far
 * @param firstFailureAt when the first failure was recorded
 */
public record FailureCount(int attempts, int failures, Instant firstFailureAt) {
}
