package dev.idem.benchmarks.soak;

import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The soak's events with their wall-clock time and seconds since the start, logged as they happen. Thread-safe. */
final class Timeline {

    private static final Logger LOG = LoggerFactory.getLogger(Timeline.class);

    private final long startNanos = System.nanoTime();
    private final List<String> events = new ArrayList<>();

    /** Records and logs an event. */
    synchronized void event(String format, Object... args) {
        String line = String.format(Locale.ROOT, "%s +%6.1fs %s",
                LocalTime.ofInstant(Instant.now(), ZoneId.systemDefault()).truncatedTo(ChronoUnit.MILLIS),
                seconds(), String.format(Locale.ROOT, format, args));
        events.add(line);
        LOG.info(line);
    }

    /** Seconds since the timeline began. */
    double seconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    synchronized List<String> events() {
        return List.copyOf(events);
    }
}
