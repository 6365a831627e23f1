package dev.idem.benchmarks.soak;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a consumer process needs, handed from the orchestrator to the child JVM as
 * {@code -Dsoak.consumer.*} system properties.
 *
 * @param broker      {@code kafka} or {@code rocketmq}
 * @param address     bootstrap servers or name server address
 * @param topic       the soak's topic
 * @param group       the consumer group
 * @param redis       the soak's own Redis, as a URL ({@code redis://}, {@code redis-sentinel://}, {@code redis-cluster://})
 * @param keyPrefix   Redis key prefix of the run
 * @param jdbcUrl     PostgreSQL
 * @param jdbcUser    its user
 * @param jdbcPassword its password, may be empty
 * @param tables      table name prefix of the run
 * @param lease       the claim lease (short, so a SIGSTOP outlives it)
 * @param concurrency partitions (Kafka) or consume threads (RocketMQ) per process
 * @param dir         where the process writes its ready marker and outcome counts
 * @param guarded     guarded mode (the JDBC ledger), or Redis-only mode ({@code DedupCheck.none()})
 */
record ConsumerSpec(String broker, String address, String topic, String group, String redis, String keyPrefix,
                    String jdbcUrl, String jdbcUser, String jdbcPassword, String tables, Duration lease,
                    int concurrency, Path dir, boolean guarded) {

    private static final String PREFIX = "soak.consumer.";

    /** The {@code -D} arguments that carry this spec and the slot. */
    List<String> properties(int slot) {
        List<String> out = new ArrayList<>();
        add(out, "broker", broker);
        add(out, "address", address);
        add(out, "topic", topic);
        add(out, "group", group);
        add(out, "redis", redis);
        add(out, "keyPrefix", keyPrefix);
        add(out, "jdbcUrl", jdbcUrl);
        add(out, "jdbcUser", jdbcUser);
        add(out, "jdbcPassword", jdbcPassword);
        add(out, "tables", tables);
        add(out, "leaseMillis", Long.toString(lease.toMillis()));
        add(out, "concurrency", Integer.toString(concurrency));
        add(out, "dir", dir.toString());
        add(out, "guarded", Boolean.toString(guarded));
        add(out, "slot", Integer.toString(slot));
        return out;
    }

    /** The spec this process was started with. */
    static ConsumerSpec fromSystemProperties() {
        return new ConsumerSpec(get("broker"), get("address"), get("topic"), get("group"), get("redis"),
                get("keyPrefix"), get("jdbcUrl"), get("jdbcUser"), System.getProperty(PREFIX + "jdbcPassword", ""),
                get("tables"), Duration.ofMillis(Long.parseLong(get("leaseMillis"))),
                Integer.parseInt(get("concurrency")), Path.of(get("dir")), Boolean.parseBoolean(get("guarded")));
    }

    /** The slot this process was started in. */
    static int slotFromSystemProperties() {
        return Integer.parseInt(get("slot"));
    }

    private static void add(List<String> out, String name, String value) {
        out.add("-D" + PREFIX + name + "=" + value);
    }

    private static String get(String name) {
        String value = System.getProperty(PREFIX + name);
        if (value == null) {
            throw new IllegalArgumentException("system property " + PREFIX + name + " is required but was not set");
        }
        return value;
    }
}
