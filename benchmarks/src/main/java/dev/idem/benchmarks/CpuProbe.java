package dev.idem.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNodes;

/**
 * CPU time used by this JVM (the consumers, and the test kit's in-process brokers) and by
 * redis-server, from {@code /proc/<pid>/stat} (user + system), so a cost per message does not depend on
 * how busy the machine was. Redis must run on this machine for its figure; otherwise it is NaN.
 */
final class CpuProbe {

    /** CPU time of each process: nanoseconds used so far, or (from perMessage) microseconds per message; NaN where unknown. */
    record Sample(double jvm, double redis) {
    }

    private final long ticksPerSecond;
    private final long redisPid;

    CpuProbe(RedissonClient redisson) {
        this.ticksPerSecond = ticksPerSecond();
        String pid = redisson.getRedisNodes(RedisNodes.SINGLE).getInstance().info(RedisNode.InfoSection.SERVER)
                .get("process_id");
        long redis = pid == null ? -1 : Long.parseLong(pid.trim());
        this.redisPid = redis > 0 && Files.isReadable(stat(redis)) ? redis : -1;
    }

    Sample sample() {
        return new Sample(cpuNanos(ProcessHandle.current().pid()), redisPid < 0 ? Double.NaN : cpuNanos(redisPid));
    }

    /** Microseconds per message of each process between two samples. */
    static Sample perMessage(Sample before, Sample after, long messages) {
        return new Sample((after.jvm() - before.jvm()) / 1_000.0 / messages,
                (after.redis() - before.redis()) / 1_000.0 / messages);
    }

    private double cpuNanos(long pid) {
        try {
            String stat = Files.readString(stat(pid));
            // Fields after the command name, which is in parentheses and may hold spaces.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);   // utime, stime
            return ticks * 1e9 / ticksPerSecond;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    private static Path stat(long pid) {
        return Path.of("/proc", Long.toString(pid), "stat");
    }

    private static long ticksPerSecond() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(getconf.getInputStream().readAllBytes()).trim();
            getconf.waitFor();
            return Long.parseLong(out);
        } catch (IOException | RuntimeException e) {
            return 100;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 100;
        }
    }
}
