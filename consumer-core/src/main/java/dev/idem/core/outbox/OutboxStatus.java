package dev.idem.core.outbox;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * What waits in the outbox, read at {@code at}: per destination, the rows not yet published, the dead
 * ones (never publishable, kept with their reason), and when the oldest unsent row was written.
 *
 * @param at           when it was read
 * @param destinations per destination, sorted by name
 */
public record OutboxStatus(Instant at, Map<String, Destination> destinations) {

    public OutboxStatus {
        destinations = java.util.Collections.unmodifiableMap(new TreeMap<>(destinations));
    }

    /**
     * One destination's rows.
     *
     * @param unsent       committed rows not yet published
     * @param dead         rows in the dead state
     * @param oldestUnsent when the oldest unsent row was written, or null when none is
     */
    public record Destination(long unsent, long dead, @Nullable Instant oldestUnsent) {
    }

    /** Rows not yet published, all destinations. */
    public long backlog() {
        return destinations.values().stream().mapToLong(Destination::unsent).sum();
    }

    /** Rows in the dead state, all destinations. */
    public long dead() {
        return destinations.values().stream().mapToLong(Destination::dead).sum();
    }

    /** How long the oldest unsent row had waited when this was read; empty when none waited. */
    public Optional<Duration> oldestUnsentAge() {
        return oldestUnsentAge(at);
    }

    /**
     * How long the oldest unsent row seen has waited by {@code now}: a status read a while ago by a
     * relay that has stopped still ages.
     */
    public Optional<Duration> oldestUnsentAge(Instant now) {
        return destinations.values().stream().map(Destination::oldestUnsent).filter(java.util.Objects::nonNull)
                .min(Instant::compareTo).map(oldest -> Duration.between(oldest, now).isNegative() ? Duration.ZERO
                        : Duration.between(oldest, now));
    }

    static OutboxStatus read(DataSource dataSource, String table, Clock clock) throws SQLException {
        Instant at = clock.instant();
        Map<String, Destination> destinations = new TreeMap<>();
        try (Connection connection = dataSource.getConnection();
             PreparedStatement select = connection.prepareStatement("select destination, state, count(*), "
                     + "min(created_at) from " + table + " where state in ('new', 'dead') group by destination, state");
             ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
                String destination = rows.getString(1);
                boolean dead = "dead".equals(rows.getString(2));
                long count = rows.getLong(3);
                Timestamp oldest = rows.getTimestamp(4);
                Destination before = destinations.getOrDefault(destination, new Destination(0, 0, null));
                destinations.put(destination, dead
                        ? new Destination(before.unsent(), count, before.oldestUnsent())
                        : new Destination(count, before.dead(), oldest == null ? null : oldest.toInstant()));
            }
        }
        return new OutboxStatus(at, destinations);
    }
}
