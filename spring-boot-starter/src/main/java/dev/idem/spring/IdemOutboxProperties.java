package dev.idem.spring;

import dev.idem.listener.OutboxSettings;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** The outbox's settings, {@code idem.outbox.*}: the table on the ledger's {@code DataSource} and its relay. */
public class IdemOutboxProperties {

    /** True: an {@code Outbox} bean joined to Spring's transactions, and a relay publishing the table. */
    private boolean enabled;
    /** The outbox table; its relay partitions are {@code <table>_relay}. */
    private String table = OutboxSettings.TABLE;
    /** Create the tables at start-up (development, tests). */
    private boolean createTable;
    /** The broker the relay publishes to, kafka or rocketmq; unset: the only broker adapter on the class path. */
    private @Nullable String broker;
    /** False: no relay in this process (another process, or Debezium, publishes the table). */
    private boolean relay = true;
    /** How often an idle relay looks for rows other processes wrote. */
    private Duration pollInterval = OutboxSettings.POLL_INTERVAL;
    /** Rows published per pass (one transaction, one wait for the broker). */
    private int batchSize = OutboxSettings.BATCH_SIZE;
    /** How long published rows are kept, marked sent; zero deletes them once published. */
    private Duration keepSent = Duration.ZERO;
    /** The longest wait between tries while the broker or the database is unreachable. */
    private Duration maxBackoff = OutboxSettings.MAX_BACKOFF;
    /** The health is DOWN once the oldest unsent row has waited longer than this. */
    private Duration stuckAfter = OutboxSettings.STUCK_AFTER;

    /** These settings as the integrations share them. */
    public OutboxSettings settings() {
        return new OutboxSettings(table, createTable, broker, relay, pollInterval, batchSize, keepSent, maxBackoff,
                stuckAfter);
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getTable() {
        return table;
    }

    public void setTable(String table) {
        this.table = table;
    }

    public boolean isCreateTable() {
        return createTable;
    }

    public void setCreateTable(boolean createTable) {
        this.createTable = createTable;
    }

    public @Nullable String getBroker() {
        return broker;
    }

    public void setBroker(@Nullable String broker) {
        this.broker = broker;
    }

    public boolean isRelay() {
        return relay;
    }

    public void setRelay(boolean relay) {
        this.relay = relay;
    }

    public Duration getPollInterval() {
        return pollInterval;
    }

    public void setPollInterval(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    public int getBatchSize() {
        return batchSize;
    }

    public void setBatchSize(int batchSize) {
        this.batchSize = batchSize;
    }

    public Duration getKeepSent() {
        return keepSent;
    }

    public void setKeepSent(Duration keepSent) {
        this.keepSent = keepSent;
    }

    public Duration getMaxBackoff() {
        return maxBackoff;
    }

    public void setMaxBackoff(Duration maxBackoff) {
        this.maxBackoff = maxBackoff;
    }

    public Duration getStuckAfter() {
        return stuckAfter;
    }

    public void setStuckAfter(Duration stuckAfter) {
        this.stuckAfter = stuckAfter;
    }
}
