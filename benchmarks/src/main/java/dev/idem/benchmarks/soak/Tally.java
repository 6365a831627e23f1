package dev.idem.benchmarks.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What the soak left behind, read once everything has drained: effects, compensations and handler
 * calls from PostgreSQL, dead letters and lag from the broker, outcome counts from the consumers.
 *
 * @param effects       effect rows per id
 * @param compensations compensation rows per id
 * @param calls         handler calls
 * @param maxAttempt    the highest attempt number a handler saw
 * @param beyondMax     ids whose handler saw an attempt above five (at most ten), with that attempt
 * @param deadLetters   dead-letter copies per id
 * @param outcomes      outcomes per kind, as the consumers counted them
 * @param lag           messages not acknowledged at the end
 * @param extra         figures only this broker has
 */
record Tally(Map<String, Integer> effects, Map<String, Integer> compensations, long calls, int maxAttempt,
             Map<String, Integer> beyondMax, Map<String, Integer> deadLetters, Map<String, Long> outcomes, long lag, Map<String, Long> extra) {

    // The processor's default maxAttempts, which the soak keeps.
    private static final int MAX_ATTEMPTS = 5;

    static Tally read(Connection connection, Tables tables, SoakBroker broker, String topic, String group, Path dir)
            throws Exception {
        long calls;
        int maxAttempt;
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("select count(*), coalesce(max(attempt), 0) from " + tables.calls())) {
            rows.next();
            calls = rows.getLong(1);
            maxAttempt = rows.getInt(2);
        }
        Map<String, Integer> beyondMax = new TreeMap<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("select id, max(attempt) from " + tables.calls()
                     + " group by id having max(attempt) > " + MAX_ATTEMPTS + " order by id limit 10")) {
            while (rows.next()) {
                beyondMax.put(rows.getString(1), rows.getInt(2));
            }
        }
        return new Tally(perId(connection, tables.effects()), perId(connection, tables.compensations()), calls, maxAttempt,
                beyondMax, broker.deadLetters(topic), outcomes(dir), broker.lag(group, topic), broker.extraFigures(group));
    }

    /**
     * One effect or compensation row: when it was written, by which process, and when the claim it
     * ran under was taken (its fence is Redis's clock at the claim, in microseconds; a row without a
     * fence, a compensation, says its own time).
     */
    record Row(Instant at, Instant claimed, long pid) {
    }

    /** The rows each of {@code ids} has in {@code table}, in the order they were written. */
    static Map<String, List<Row>> rows(Connection connection, String table, Collection<String> ids)
            throws SQLException {
        Map<String, List<Row>> rows = new HashMap<>();
        if (ids.isEmpty()) {
            return rows;
        }
        try (PreparedStatement select = connection.prepareStatement("select id, at, fence, pid from " + table
                + " where id = any (?) order by at")) {
            select.setArray(1, connection.createArrayOf("varchar", ids.toArray()));
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    Instant at = result.getTimestamp(2).toInstant();
                    long fence = result.getLong(3);
                    Instant claimed = fence > 0 ? Instant.EPOCH.plus(fence, ChronoUnit.MICROS) : at;
                    rows.computeIfAbsent(result.getString(1), id -> new ArrayList<>())
                            .add(new Row(at, claimed.isAfter(at) ? at : claimed, result.getLong(4)));
                }
            }
        }
        return rows;
    }

    /** Ids with at least one row in {@code table}. */
    static long distinctIds(Connection connection, String table) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("select count(distinct id) from " + table)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    static long rows(Connection connection, String table) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("select count(*) from " + table)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static Map<String, Integer> perId(Connection connection, String table) throws SQLException {
        Map<String, Integer> counts = new HashMap<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("select id, count(*) from " + table + " group by id")) {
            while (rows.next()) {
                counts.put(rows.getString(1), rows.getInt(2));
            }
        }
        return counts;
    }

    /** Sums the last counts every consumer process wrote (a kill loses at most half a second of them). */
    private static Map<String, Long> outcomes(Path dir) throws IOException {
        Map<String, Long> sums = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("counts-\\d+-\\d+")).toList()) {
                for (String line : Files.readAllLines(file)) {
                    String[] parts = line.split("=", 2);
                    if (parts.length == 2) {
                        sums.merge(parts[0], Long.parseLong(parts[1]), Long::sum);
                    }
                }
            }
        }
        return sums;
    }

    long deliveries() {
        return outcomes.values().stream().mapToLong(Long::longValue).sum();
    }

    /** What happened to one id, in time order: handler calls, effects and compensations with their process. */
    static List<String> history(Connection connection, Tables tables, String id) throws SQLException {
        List<String> lines = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(
                "select at, what, slot, pid, attempt, fence, note from ("
                        + "select at, 'call' as what, slot, pid, attempt, fence, note from " + tables.calls() + " where id = ?"
                        + " union all select at, 'EFFECT', slot, pid, attempt, fence, note from " + tables.effects() + " where id = ?"
                        + " union all select at, 'COMPENSATION', slot, pid, attempt, fence, note from " + tables.compensations()
                        + " where id = ?) h order by at")) {
            select.setString(1, id);
            select.setString(2, id);
            select.setString(3, id);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    lines.add(String.format("%s %-12s consumer %d pid %d attempt %d fence %d %s", rows.getTimestamp(1)
                                    .toInstant(), rows.getString(2), rows.getInt(3), rows.getLong(4), rows.getInt(5),
                            rows.getLong(6), rows.getString(7) == null ? "" : rows.getString(7)));
                }
            }
        }
        return lines;
    }
}
