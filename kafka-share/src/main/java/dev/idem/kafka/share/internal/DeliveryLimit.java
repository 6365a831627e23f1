package dev.idem.kafka.share.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.jspecify.annotations.Nullable;

/**
 * The share group's delivery count limit, read from the cluster at start-up, and the check that Idem,
 * not the broker, settles every record (decision 0032). The broker archives a record once it has
 * been delivered {@code limit} times and not accepted, silently: no dead letter, no compensation.
 */
public final class DeliveryLimit {

    /** The group's setting (kafka-configs --entity-type groups). */
    public static final String GROUP_SETTING = "share.delivery.count.limit";
    /** The brokers' default for groups that do not set it. */
    public static final String BROKER_SETTING = "group.share.delivery.count.limit";
    // Kafka's own default for group.share.delivery.count.limit.
    private static final int KAFKA_DEFAULT = 5;

    private DeliveryLimit() {
    }

    /**
     * The limit in force for {@code group}: the group's own setting, or else the brokers' default.
     *
     * @throws IllegalStateException if the cluster cannot be asked within {@code timeout}, saying why
     */
    public static int read(Admin admin, String group, Duration timeout) {
        try {
            DescribeConfigsOptions options = new DescribeConfigsOptions().timeoutMs((int) timeout.toMillis());
            ConfigResource groupResource = new ConfigResource(ConfigResource.Type.GROUP, group);
            Config groupConfig = admin.describeConfigs(List.of(groupResource), options).all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(groupResource);
            Integer limit = value(groupConfig, GROUP_SETTING);
            if (limit != null) {
                return limit;
            }
            Node node = admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS).iterator().next();
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, node.idString());
            Map<ConfigResource, Config> brokers = admin.describeConfigs(List.of(broker), options).all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            limit = value(brokers.get(broker), BROKER_SETTING);
            return limit == null ? KAFKA_DEFAULT : limit;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + GROUP_SETTING + " of share group " + group, e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException("could not read " + GROUP_SETTING + " of share group '" + group
                    + "' (nor the brokers' " + BROKER_SETTING + ") within " + timeout + ": " + cause
                    + ". Idem needs it to settle every record before the broker archives it; "
                    + "the consumer's principal needs DESCRIBE_CONFIGS on the group and the cluster", cause);
        }
    }

    private static @Nullable Integer value(@Nullable Config config, String name) {
        if (config == null) {
            return null;
        }
        ConfigEntry entry = config.get(name);
        if (entry == null || entry.value() == null || entry.value().isBlank()) {
            return null;
        }
        return Integer.valueOf(entry.value().trim());
    }

    /**
     * The smallest limit Idem accepts for {@code maxAttempts}: a handler that kills its process on
     * every run is run {@code maxAttempts + 1} times (the first crash cannot be counted: its claim's
     * outcome was never known; decision 0003), each run ending in a lock expiry, one delivery, and is
     * dead-lettered without running at the delivery after, which must still be Idem's.
     */
    public static int required(int maxAttempts) {
        return maxAttempts + 2;
    }

    /**
     * @throws IllegalArgumentException naming the setting, when the limit leaves no room for Idem's
     *                                  own series
     */
    public static void check(int limit, int maxAttempts, String group) {
        if (limit < required(maxAttempts)) {
            throw new IllegalArgumentException(GROUP_SETTING + " of share group '" + group + "' is " + limit
                    + " but must be >= maxAttempts + 2 = " + required(maxAttempts) + ": the broker archives a record "
                    + "after that many deliveries without a dead letter or a compensation, and a handler that crashes "
                    + "its process needs maxAttempts + 2 deliveries to reach Idem's dead letter. Raise it with "
                    + "kafka-configs --entity-type groups --entity-name " + group + " --alter --add-config "
                    + GROUP_SETTING + "=" + required(maxAttempts) + " (or the brokers' " + BROKER_SETTING
                    + "; Kafka allows up to group.share.max.delivery.count.limit, 10 by default), or lower maxAttempts");
        }
    }
}
