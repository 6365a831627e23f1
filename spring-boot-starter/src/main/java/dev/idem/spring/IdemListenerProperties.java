package dev.idem.spring;

import dev.idem.listener.ConsumeFrom;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One listener's settings, under {@code idem.listeners.<name>} ({@link IdemProperties#getListeners()}):
 * a setting set here overrides the annotation's; one set nowhere keeps Idem's default (said on each).
 * Each is a {@link dev.idem.listener.ListenerSetting} of the same name.
 */
public class IdemListenerProperties {
    /** Handler attempts before the dead letter. Default 5. */
    private @Nullable Integer maxAttempts;
    /** The claim's lease; longer than the slowest handler pause. Default 30 s. */
    private @Nullable Duration lease;
    /** Where dead letters go. Default {@code <topic>.DLT} (Kafka), {@code <topic>_DLQ} (RocketMQ). */
    private @Nullable String deadLetterTopic;
    /** The first retry's backoff. Default 1 s. */
    private @Nullable Duration backoffInitial;
    /** The largest retry backoff. Default 1 min (or the first, when that is longer). */
    private @Nullable Duration backoffMax;
    /** The backoff's jitter, a fraction (0.2 is ± 20%). Default 0.2. */
    private @Nullable Double backoffJitter;
    /** How long infrastructure trouble is deferred uncounted before the failures count. Default 30 min. */
    private @Nullable Duration maxDeferral;
    /** Tries of the compensation before its outcome is recorded as failed. Default 3. */
    private @Nullable Integer compensationAttempts;
    /** Exception classes never retried: the first such failure sends the message to the dead letter. */
    private Class<?> @Nullable [] fatalExceptions;
    /** Exception classes that mean infrastructure trouble: deferred uncounted for up to {@code max-deferral}. */
    private Class<?> @Nullable [] infrastructureExceptions;
    /** How long the application's stop waits for the listener's running records. Default 30 s. */
    private @Nullable Duration closeTimeout;
    /** Work at once (Kafka partitions, share-group records, RocketMQ threads); not for wrapped listeners. */
    private @Nullable Integer concurrency;
    /** Kafka: how long the consumer may go without joining its group before it reports a failure. */
    private @Nullable Duration joinTimeout;
    /** Kafka share groups: how often the group's delivery limit is read again. Default 30 s. */
    private @Nullable Duration deliveryLimitRefresh;
    /** RocketMQ: messages per listener call, claimed in one round trip. */
    private @Nullable Integer batchSize;
    /** RocketMQ: consume each queue in order. */
    private @Nullable Boolean orderly;
    /** RocketMQ: where a new group starts, {@code last-offset} (the default) or {@code first-offset}. */
    private @Nullable ConsumeFrom consumeFrom;

    public @Nullable Integer getMaxAttempts() {
        return maxAttempts;
    }

    public void setMaxAttempts(@Nullable Integer maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    public @Nullable Duration getLease() {
        return lease;
    }

    public void setLease(@Nullable Duration lease) {
        this.lease = lease;
    }

    public @Nullable String getDeadLetterTopic() {
        return deadLetterTopic;
    }

    public void setDeadLetterTopic(@Nullable String deadLetterTopic) {
        this.deadLetterTopic = deadLetterTopic;
    }

    public @Nullable Duration getBackoffInitial() {
        return backoffInitial;
    }

    public void setBackoffInitial(@Nullable Duration backoffInitial) {
        this.backoffInitial = backoffInitial;
    }

    public @Nullable Duration getBackoffMax() {
        return backoffMax;
    }

    public void setBackoffMax(@Nullable Duration backoffMax) {
        this.backoffMax = backoffMax;
    }

    public @Nullable Double getBackoffJitter() {
        return backoffJitter;
    }

    public void setBackoffJitter(@Nullable Double backoffJitter) {
        this.backoffJitter = backoffJitter;
    }

    public @Nullable Duration getMaxDeferral() {
        return maxDeferral;
    }

    public void setMaxDeferral(@Nullable Duration maxDeferral) {
        this.maxDeferral = maxDeferral;
    }

    public @Nullable Integer getCompensationAttempts() {
        return compensationAttempts;
    }

    public void setCompensationAttempts(@Nullable Integer compensationAttempts) {
        this.compensationAttempts = compensationAttempts;
    }

    public Class<?> @Nullable [] getFatalExceptions() {
        return fatalExceptions;
    }

    public void setFatalExceptions(Class<?> @Nullable [] fatalExceptions) {
        this.fatalExceptions = fatalExceptions;
    }

    public Class<?> @Nullable [] getInfrastructureExceptions() {
        return infrastructureExceptions;
    }

    public void setInfrastructureExceptions(Class<?> @Nullable [] infrastructureExceptions) {
        this.infrastructureExceptions = infrastructureExceptions;
    }

    public @Nullable Duration getCloseTimeout() {
        return closeTimeout;
    }

    public void setCloseTimeout(@Nullable Duration closeTimeout) {
        this.closeTimeout = closeTimeout;
    }

    public @Nullable Integer getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(@Nullable Integer concurrency) {
        this.concurrency = concurrency;
    }

    public @Nullable Duration getJoinTimeout() {
        return joinTimeout;
    }

    public void setJoinTimeout(@Nullable Duration joinTimeout) {
        this.joinTimeout = joinTimeout;
    }

    public @Nullable Duration getDeliveryLimitRefresh() {
        return deliveryLimitRefresh;
    }

    public void setDeliveryLimitRefresh(@Nullable Duration deliveryLimitRefresh) {
        this.deliveryLimitRefresh = deliveryLimitRefresh;
    }

    public @Nullable Integer getBatchSize() {
        return batchSize;
    }

    public void setBatchSize(@Nullable Integer batchSize) {
        this.batchSize = batchSize;
    }

    public @Nullable Boolean getOrderly() {
        return orderly;
    }

    public void setOrderly(@Nullable Boolean orderly) {
        this.orderly = orderly;
    }

    public @Nullable ConsumeFrom getConsumeFrom() {
        return consumeFrom;
    }

    public void setConsumeFrom(@Nullable ConsumeFrom consumeFrom) {
        this.consumeFrom = consumeFrom;
    }
}
