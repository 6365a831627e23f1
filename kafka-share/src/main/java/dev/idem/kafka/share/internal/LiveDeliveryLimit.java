package dev.idem.kafka.share.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a share group's delivery count limit current: the group setting is dynamic, and a record
 * Idem releases on what is in fact its last delivery is archived by the broker without a dead letter.
 * Read again every period on a thread of its own (never the poll thread); a read that fails keeps
 * the last value. Thread-safe.
 */
public final class LiveDeliveryLimit implements IntSupplier, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LiveDeliveryLimit.class);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    private final Admin admin;
    private final String group;
    private final int maxAttempts;
    private final ScheduledExecutorService reader;
    private volatile int limit;

    private LiveDeliveryLimit(Admin admin, String group, int maxAttempts, int limit) {
        this.admin = admin;
        this.group = group;
        this.maxAttempts = maxAttempts;
        this.limit = limit;
        this.reader = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "idem-kafka-share-limit-" + group);
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Reads the limit now, refuses one without room for Idem's attempts, then reads it again every
     * {@code period}.
     *
     * @throws IllegalArgumentException naming the setting, when the limit is below maxAttempts + 2
     * @throws IllegalStateException    if the cluster cannot be asked
     */
    public static LiveDeliveryLimit start(Map<String, Object> adminConfig, String group, int maxAttempts,
                                          Duration period) {
        Admin admin = Admin.create(adminConfig);
        try {
            int limit = DeliveryLimit.read(admin, group, READ_TIMEOUT);
            DeliveryLimit.check(limit, maxAttempts, group);
            LiveDeliveryLimit live = new LiveDeliveryLimit(admin, group, maxAttempts, limit);
            live.reader.scheduleWithFixedDelay(live::refresh, period.toMillis(), period.toMillis(),
                    TimeUnit.MILLISECONDS);
            return live;
        } catch (RuntimeException | Error e) {
            admin.close(Duration.ZERO);
            throw e;
        }
    }

    /** The limit as last read. */
    @Override
    public int getAsInt() {
        return limit;
    }

    private void refresh() {
        int now;
        try {
            now = DeliveryLimit.read(admin, group, READ_TIMEOUT);
        } catch (RuntimeException e) {
            LOG.warn("keeping {} = {} for share group '{}': {}", DeliveryLimit.GROUP_SETTING, limit, group,
                    e.getMessage());
            return;
        }
        if (now == limit) {
            return;
        }
        if (now < DeliveryLimit.required(maxAttempts)) {
            LOG.error("{} of share group '{}' changed from {} to {}, below maxAttempts + 2 = {}: Idem now holds a "
                    + "failing record on delivery {} and runs it again here, but a record whose process crashes on "
                    + "that delivery is archived by the broker without a dead letter; raise it again",
                    DeliveryLimit.GROUP_SETTING, group, limit, now, DeliveryLimit.required(maxAttempts), now);
        } else {
            LOG.info("{} of share group '{}' changed from {} to {}", DeliveryLimit.GROUP_SETTING, group, limit, now);
        }
        limit = now;
    }

    @Override
    public void close() {
        reader.shutdownNow();
        admin.close(Duration.ZERO);
    }
}
