package dev.idem.kafka;

import java.time.Duration;

/**
 * Seek the partition back to {@code offset} and deliver from there again after {@code delay}.
 *
 * @param offset the first record still to process
 * @param delay  how long to pause the partition first
 */
public record Redelivery(long offset, Duration delay) {
}
