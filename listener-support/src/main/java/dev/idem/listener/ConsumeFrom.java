package dev.idem.listener;

/** Where a new RocketMQ consumer group starts: {@code last-offset} or {@code first-offset}. */
public enum ConsumeFrom {
    LAST_OFFSET, FIRST_OFFSET
}
