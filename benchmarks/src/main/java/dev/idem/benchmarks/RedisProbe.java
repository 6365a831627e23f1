package dev.idem.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;

/** Reads Redis's own counters (commands executed, per command, from INFO commandstats) and the CPU time used. */
final class RedisProbe {

    private final RedissonClient redisson;
    private final CpuProbe cpu;

    RedisProbe(RedissonClient redisson) {
        this.redisson = redisson;
        this.cpu = new CpuProbe(redisson);
    }

    /** CPU time used so far by this JVM and by redis-server. */
    CpuProbe.Sample cpu() {
        return cpu.sample();
    }

    /** Calls per command name, e.g. {evalsha=40, set=1000}; the probe's own INFO excluded. */
    Map<String, Long> commandCalls() {
        Map<String, String> stats = redisson.getRedisNodes(RedisNodes.SINGLE).getInstance()
                .info(RedisNode.InfoSection.COMMANDSTATS);
        Map<String, Long> calls = new java.util.HashMap<>();
        stats.forEach((name, value) -> {
            if (name.startsWith("cmdstat_") && !name.equals("cmdstat_info")) {
                for (String part : value.split(",")) {
                    if (part.startsWith("calls=")) {
                        calls.put(name.substring("cmdstat_".length()), Long.parseLong(part.substring(6)));
                    }
                }
            }
        });
        return calls;
    }

    /** Deletes every key matching {@code pattern} (a run's own prefix), so runs do not pile up in Redis. */
    void forget(String pattern) {
        List<String> batch = new ArrayList<>(1_000);
        redisson.getKeys().getKeysStreamByPattern(pattern, 1_000).forEach(key -> {
            batch.add(key);
            if (batch.size() == 1_000) {
                redisson.getKeys().unlink(batch.toArray(String[]::new));
                batch.clear();
            }
        });
        if (!batch.isEmpty()) {
            redisson.getKeys().unlink(batch.toArray(String[]::new));
        }
    }

    /** Calls per command between two readings, the most called first, e.g. "set=1000, evalsha=4". */
    static String byCommand(Map<String, Long> before, Map<String, Long> after) {
        return after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(java.util.stream.Collectors.joining(", "));
    }

    static long total(Map<String, Long> before, Map<String, Long> after) {
        return after.entrySet().stream().mapToLong(e -> e.getValue() - before.getOrDefault(e.getKey(), 0L)).sum();
    }

    static long of(Map<String, Long> before, Map<String, Long> after, Set<String> commands) {
        return commands.stream().mapToLong(c -> after.getOrDefault(c, 0L) - before.getOrDefault(c, 0L)).sum();
    }
}
