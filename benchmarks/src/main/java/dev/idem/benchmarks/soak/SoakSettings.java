package dev.idem.benchmarks.soak;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The soak's settings, from {@code -Dsoak.*} system properties (the {@code -Psoak} profile passes
 * them on):
 *
 * @param broker      {@code soak.broker}: {@code kafka} (default, a consumer group), {@code share} (a Kafka
 *                    share group) or {@code rocketmq}
 * @param duration    {@code soak.seconds}: how long traffic and faults run, default 180
 * @param seed        {@code soak.seed}: the random seed of traffic and faults, default a new one (printed)
 * @param idsPerSecond {@code soak.rate}: new ids per second, default 20 (each sent 2 or 3 times)
 * @param consumers   {@code soak.consumers}: consumer processes, default 3
 * @param concurrency {@code soak.concurrency}: partitions or threads per process, default 4
 * @param partitions  {@code soak.partitions}: partitions (queues) of the topic, default 12
 * @param lease       {@code soak.leaseMillis}: the claim lease, default 3000 (pauses outlast it)
 * @param drain       {@code soak.drainSeconds}: the longest wait for the consumers to finish, default 120
 * @param guarded     {@code soak.guard}: {@code ledger} (default) runs guarded mode; {@code none} runs
 *                    Redis-only mode ({@code DedupCheck.none()}), whose promise ends where Redis loses
 *                    data: repeats are allowed only after a loss of the id's record, and counted
 * @param redis       {@code soak.redis}: {@code single} (default; its fault: killed and started again
 *                    empty), {@code sentinel} (a Sentinel failover that loses writes) or {@code cluster}
 *                    (a live reshard)
 */
record SoakSettings(String broker, Duration duration, long seed, double idsPerSecond, int consumers, int concurrency,
                    int partitions, Duration lease, Duration drain, boolean guarded, String redis) {

    static SoakSettings fromSystemProperties() {
        String broker = System.getProperty("soak.broker", "kafka").trim().toLowerCase(Locale.ROOT);
        if (!broker.equals("kafka") && !broker.equals("rocketmq") && !broker.equals("share")) {
            throw new IllegalArgumentException("soak.broker must be kafka, share or rocketmq but was '" + broker + "'");
        }
        String seed = System.getProperty("soak.seed", "").trim();
        String guard = System.getProperty("soak.guard", "").trim();
        if (!guard.isEmpty() && !guard.equals("ledger") && !guard.equals("none")) {
            throw new IllegalArgumentException("soak.guard must be ledger or none but was '" + guard + "'");
        }
        String redis = System.getProperty("soak.redis", "single").trim().toLowerCase(Locale.ROOT);
        if (!redis.equals("single") && !redis.equals("sentinel") && !redis.equals("cluster")) {
            throw new IllegalArgumentException("soak.redis must be single, sentinel or cluster but was '" + redis + "'");
        }
        SoakSettings settings = new SoakSettings(broker,
                Duration.ofSeconds(positive("soak.seconds", 180)),
                seed.isEmpty() ? ThreadLocalRandom.current().nextLong(1, 1_000_000) : Long.parseLong(seed),
                positive("soak.rate", 20),
                (int) positive("soak.consumers", 3),
                (int) positive("soak.concurrency", 4),
                (int) positive("soak.partitions", 12),
                Duration.ofMillis(positive("soak.leaseMillis", 3000)),
                Duration.ofSeconds(positive("soak.drainSeconds", 120)),
                !guard.equals("none"), redis);
        return settings;
    }

    private static long positive(String name, long fallback) {
        String value = System.getProperty(name, "").trim();
        long parsed = value.isEmpty() ? fallback : Long.parseLong(value);
        if (parsed < 1) {
            throw new IllegalArgumentException(name + " must be >= 1 but was " + parsed);
        }
        return parsed;
    }
}
