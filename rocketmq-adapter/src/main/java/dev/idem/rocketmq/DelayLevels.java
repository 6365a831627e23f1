package dev.idem.rocketmq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The broker's {@code messageDelayLevel} table, to turn Idem's backoff into the delay level of
 * {@code setDelayLevelWhenNextConsume}: the shortest level at least as long as the backoff.
 * Immutable.
 */
public final class DelayLevels {

    /** RocketMQ's default table. */
    public static final String DEFAULT = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h";

    private final List<Duration> levels;

    private DelayLevels(List<Duration> levels) {
        this.levels = List.copyOf(levels);
    }

    /** RocketMQ's default levels. */
    public static DelayLevels defaults() {
        return parse(DEFAULT);
    }

    /**
     * Levels written as the broker's {@code messageDelayLevel} setting, e.g. {@code "1s 5s 10s 1m"}.
     *
     * @throws IllegalArgumentException if a level is not a number followed by s, m, h or d
     */
    public static DelayLevels parse(String table) {
        List<Duration> levels = new ArrayList<>();
        for (String level : table.trim().split("\\s+")) {
            if (!level.matches("\\d+[smhd]")) {
                throw new IllegalArgumentException("delay levels must look like '1s 5s 1m 2h' but had '" + level + "'");
            }
            long amount = Long.parseLong(level.substring(0, level.length() - 1));
            levels.add(switch (level.toLowerCase(Locale.ROOT).charAt(level.length() - 1)) {
                case 's' -> Duration.ofSeconds(amount);
                case 'm' -> Duration.ofMinutes(amount);
                case 'h' -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            });
        }
        return new DelayLevels(levels);
    }

    /**
     * The level for a message that comes back without a run counted against it (Busy: another
     * consumer holds its key; Deferred: infrastructure trouble) after {@code sendBacks} earlier
     * redeliveries: the level for {@code delay}, and at least level {@code sendBacks + 1}. Each such
     * send-back raises the broker's {@code reconsumeTimes}, so a copy waiting for a long handler
     * would otherwise reach {@code maxReconsumeTimes} and RocketMQ's {@code %DLQ%} within minutes;
     * climbing the table spreads the same count over its whole length (over a day with RocketMQ's
     * levels and Idem's 32 spare redeliveries).
     */
    public int levelFor(Duration delay, int sendBacks) {
        return Math.max(levelFor(delay), Math.min(Math.max(sendBacks, 0) + 1, levels.size()));
    }

    /** The delay of {@code level} (from 1). */
    public Duration delayOf(int level) {
        return levels.get(Math.min(Math.max(level, 1), levels.size()) - 1);
    }

    /** The level (from 1) of the shortest delay not shorter than {@code delay}; the last level at most. */
    public int levelFor(Duration delay) {
        for (int i = 0; i < levels.size(); i++) {
            if (levels.get(i).compareTo(delay) >= 0) {
                return i + 1;
            }
        }
        return levels.size();
    }
}
