package dev.idem.benchmarks.soak;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The chaos loop: every 6 to 12 seconds, in shuffled rounds of three, it kills a consumer with
 * SIGKILL (started again 0 to 2 s later), pauses one with SIGSTOP for longer than the lease (1 to
 * 12 s longer: some pauses also outlast Kafka's session timeout), or strikes Redis with its
 * topology's fault ({@link SoakRedis}: killed and started again empty, a Sentinel failover that
 * loses writes, a live reshard). Faults overlap: a pause runs while the next fault happens. Every
 * action is on the timeline. Not thread-safe: one thread runs it.
 */
final class Chaos {

    private enum Fault { KILL, PAUSE, REDIS }

    /** A consumer process stopped: killed ({@code paused} false) or paused beyond its lease, at {@code at}. */
    record Stop(long pid, Instant at, boolean paused) {
    }

    private static final int MIN_GAP_MILLIS = 6_000;
    private static final int MAX_GAP_MILLIS = 12_000;
    private static final int MAX_RESTART_DELAY_MILLIS = 2_000;
    private static final int MAX_PAUSE_BEYOND_LEASE_MILLIS = 12_000;
    private static final long TICK_MILLIS = 50;

    private final ConsumerProcesses consumers;
    private final SoakRedis redis;
    private final Random random;
    private final Duration lease;
    private final Timeline timeline;
    private final long[] restartAt;
    private final long[] resumeAt;
    private final long[] pausedAt;
    private final List<Fault> round = new ArrayList<>();
    private final List<Stop> stops = new ArrayList<>();
    private int kills;
    private int pauses;
    private double longestPause;
    private double shortestPause = Double.MAX_VALUE;

    Chaos(ConsumerProcesses consumers, SoakRedis redis, Random random, Duration lease, Timeline timeline) {
        this.consumers = consumers;
        this.redis = redis;
        this.random = random;
        this.lease = lease;
        this.timeline = timeline;
        this.restartAt = new long[consumers.size()];
        this.resumeAt = new long[consumers.size()];
        this.pausedAt = new long[consumers.size()];
    }

    /**
     * Runs faults for {@code duration}, then lets the faults under way end as planned (a pause is
     * never cut short): all consumers run and Redis is up when it returns.
     */
    void run(Duration duration) throws Exception {
        long end = System.nanoTime() + duration.toNanos();
        long next = System.nanoTime() + gap();
        while (System.nanoTime() < end || underWay()) {
            heal();
            if (System.nanoTime() < end && System.nanoTime() >= next) {
                fault(nextFault());
                next = System.nanoTime() + gap();
            }
            TimeUnit.MILLISECONDS.sleep(TICK_MILLIS);
        }
    }

    private boolean underWay() {
        for (int slot = 0; slot < consumers.size(); slot++) {
            if (resumeAt[slot] != 0 || restartAt[slot] != 0) {
                return true;
            }
        }
        return redis.underWay();
    }

    private long gap() {
        return TimeUnit.MILLISECONDS.toNanos(MIN_GAP_MILLIS + random.nextInt(MAX_GAP_MILLIS - MIN_GAP_MILLIS));
    }

    private Fault nextFault() {
        if (round.isEmpty()) {
            round.addAll(List.of(Fault.values()));
            Collections.shuffle(round, random);
        }
        return round.remove(0);
    }

    private void fault(Fault fault) throws Exception {
        switch (fault) {
            case KILL -> {
                int slot = runningSlot();
                if (slot < 0) {
                    timeline.event("no running consumer to kill");
                    return;
                }
                Instant at = Instant.now();
                long pid = consumers.kill(slot);
                stops.add(new Stop(pid, at, false));
                int delay = random.nextInt(MAX_RESTART_DELAY_MILLIS + 1);
                restartAt[slot] = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay);
                kills++;
                timeline.event("kill -9 consumer %d (pid %d); restart in %d ms", slot, pid, delay);
            }
            case PAUSE -> {
                int slot = runningSlot();
                if (slot < 0) {
                    timeline.event("no running consumer to pause");
                    return;
                }
                long millis = lease.toMillis() + 1_000 + random.nextInt(MAX_PAUSE_BEYOND_LEASE_MILLIS - 1_000);
                stops.add(new Stop(consumers.pid(slot), Instant.now(), true));
                consumers.pause(slot);
                pausedAt[slot] = System.nanoTime();
                resumeAt[slot] = pausedAt[slot] + TimeUnit.MILLISECONDS.toNanos(millis);
                pauses++;
                timeline.event("kill -STOP consumer %d (pid %d) for %d ms (lease %d ms)", slot, consumers.pid(slot),
                        millis, lease.toMillis());
            }
            case REDIS -> timeline.event("%s", redis.fault(random));
        }
    }

    /** A slot whose consumer runs (not paused, not waiting for its restart), at random; -1 if none. */
    private int runningSlot() {
        List<Integer> running = new ArrayList<>();
        for (int slot = 0; slot < consumers.size(); slot++) {
            if (restartAt[slot] == 0 && !consumers.stopped(slot)) {
                running.add(slot);
            }
        }
        return running.isEmpty() ? -1 : running.get(random.nextInt(running.size()));
    }

    /** Ends the faults that are due. */
    private void heal() throws Exception {
        long now = System.nanoTime();
        for (int slot = 0; slot < consumers.size(); slot++) {
            if (resumeAt[slot] != 0 && now >= resumeAt[slot]) {
                consumers.resume(slot);
                double seconds = (System.nanoTime() - pausedAt[slot]) / 1e9;
                longestPause = Math.max(longestPause, seconds);
                shortestPause = Math.min(shortestPause, seconds);
                resumeAt[slot] = 0;
                timeline.event("kill -CONT consumer %d (pid %d) after %.1f s", slot, consumers.pid(slot), seconds);
            }
            if (restartAt[slot] != 0 && now >= restartAt[slot]) {
                long pid = consumers.start(slot);
                restartAt[slot] = 0;
                timeline.event("consumer %d started again (pid %d)", slot, pid);
            }
        }
        String healed = redis.heal();
        if (healed != null) {
            timeline.event("%s", healed);
        }
    }

    /** Every kill and pause, in time order. */
    List<Stop> stops() {
        return List.copyOf(stops);
    }

    int kills() {
        return kills;
    }

    int pauses() {
        return pauses;
    }

    int redisFaults() {
        return redis.faults();
    }

    /** The shortest and longest pause, in seconds, or zeros when there was none. */
    double[] pauseRange() {
        return pauses == 0 ? new double[] {0, 0} : new double[] {shortestPause, longestPause};
    }
}
