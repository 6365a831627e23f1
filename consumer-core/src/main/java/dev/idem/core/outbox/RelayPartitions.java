package dev.idem.core.outbox;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One relay pass: in one transaction, lock every partition's relay row this process can have (rows
 * another relay holds are skipped, {@code FOR UPDATE SKIP LOCKED}), publish the oldest unsent rows
 * of those partitions in position order, and mark them; the commit releases the locks. No two relays
 * publish one partition at once, and a relay that dies leaves its rows for the next. One transaction
 * and one wait for the broker per pass, whatever the number of partitions.
 */
final class RelayPartitions {

    private static final Logger LOG = LoggerFactory.getLogger(RelayPartitions.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };
    private static final int MAX_ERROR = 1000;
    private static final int MARK_CHUNK = 500;
    // How long at most a destination whose rows failed is left out of the passes.
    private static final Duration REST = Duration.ofSeconds(1);

    /** What a pass did: rows published, failed for now, sent to the dead state; whether a partition had more. */
    record Pass(int published, int retried, int dead, boolean more) {
    }

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final OutboxPublisher publisher;
    private final int batchSize;
    private final boolean keepSent;
    private final Duration rest;
    // Destination -> System.nanoTime() until which it rests; only the relay's thread uses it.
    private final Map<String, Long> resting = new java.util.HashMap<>();

    RelayPartitions(DataSource dataSource, String table, Clock clock, OutboxPublisher publisher, int batchSize,
                    Duration keepSent, Duration maxBackoff) {
        this.dataSource = dataSource;
        this.table = table;
        this.clock = clock;
        this.publisher = publisher;
        this.batchSize = batchSize;
        this.keepSent = !keepSent.isZero();
        this.rest = maxBackoff.compareTo(REST) < 0 ? maxBackoff : REST;
    }

    /** One pass; a publisher that fails is logged and its rows counted as retried; the database failing ends it. */
    Pass pass() throws SQLException, InterruptedException {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                boolean any = anyUnsent(connection);
                // Its snapshot ends here: on MySQL, rows read in it would miss another relay's marks.
                connection.rollback();
                return any ? drain(connection) : new Pass(0, 0, 0, false);
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        }
    }

    private boolean anyUnsent(Connection connection) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("select position from " + table
                + " where state = 'new'")) {
            select.setMaxRows(1);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next();
            }
        }
    }

    /** Publishes the oldest unsent rows of the partitions it can lock, and marks them. */
    private Pass drain(Connection connection) throws SQLException, InterruptedException {
        List<OutboxRecord> records = List.of();
        try {
            List<Integer> partitions = lock(connection);
            if (partitions.isEmpty()) {
                connection.rollback();
                return new Pass(0, 0, 0, false);
            }
            records = unsent(connection, partitions);
            if (records.isEmpty()) {
                connection.commit();
                return new Pass(0, 0, 0, false);
            }
            List<OutboxPublisher.Result> results = publisher.publish(records);
            if (results.size() != records.size()) {
                throw new IllegalStateException("publisher " + publisher + " answered " + results.size()
                        + " results for " + records.size() + " records");
            }
            Pass pass = mark(connection, partitions, records, results);
            connection.commit();
            return pass;
        } catch (SQLException | InterruptedException | RuntimeException e) {
            try {
                connection.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            if (e instanceof RuntimeException && !records.isEmpty()) {
                LOG.warn("outbox relay on {}: publishing {} rows failed; tried again later", table, records.size(), e);
                return new Pass(0, records.size(), 0, false);
            }
            throw e;
        }
    }

    private List<Integer> lock(Connection connection) throws SQLException {
        List<Integer> partitions = new ArrayList<>();
        try (PreparedStatement lock = connection.prepareStatement("select partition_no from " + table
                + "_relay for update skip locked");
             ResultSet rows = lock.executeQuery()) {
            while (rows.next()) {
                partitions.add(rows.getInt(1));
            }
        }
        return partitions;
    }

    /**
     * The oldest unsent rows of {@code partitions}, leaving out destinations that failed a moment ago
     * (so one that fails every time does not hold up the others by always being the oldest).
     */
    private List<OutboxRecord> unsent(Connection connection, List<Integer> partitions) throws SQLException {
        List<String> skipped = resting();
        String sql = "select position, id, destination, message_key, payload, headers, traceparent, created_at, "
                + "attempts from " + table + " where state = 'new' and partition_no in ("
                + String.join(", ", partitions.stream().map(String::valueOf).toList()) + ")"
                + (skipped.isEmpty() ? "" : " and destination not in ("
                + String.join(", ", Collections.nCopies(skipped.size(), "?")) + ")")
                + " order by position limit " + batchSize;
        List<OutboxRecord> records = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            for (int i = 0; i < skipped.size(); i++) {
                select.setString(i + 1, skipped.get(i));
            }
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    records.add(new OutboxRecord(rows.getLong(1), rows.getString(2), rows.getString(3),
                            rows.getString(4), rows.getBytes(5), headers(rows.getString(6)), rows.getString(7),
                            rows.getTimestamp(8).toInstant(), rows.getInt(9)));
                }
            }
        }
        return records;
    }

    /** Destinations whose rows failed less than {@code rest} ago. */
    private List<String> resting() {
        long now = System.nanoTime();
        resting.values().removeIf(until -> until - now <= 0);
        return List.copyOf(resting.keySet());
    }

    private Pass mark(Connection connection, List<Integer> partitions, List<OutboxRecord> records,
                      List<OutboxPublisher.Result> results) throws SQLException {
        int retried = 0;
        int dead = 0;
        Timestamp now = Timestamp.from(clock.instant());
        List<Long> sent = new ArrayList<>(records.size());
        try (PreparedStatement failed = connection.prepareStatement("update " + table
                + " set state = ?, attempts = attempts + 1, last_error = ? where position = ?")) {
            for (int i = 0; i < records.size(); i++) {
                OutboxRecord record = records.get(i);
                OutboxPublisher.Result result = results.get(i);
                if (result instanceof OutboxPublisher.Published) {
                    sent.add(record.position());
                    continue;
                }
                boolean poison = result instanceof OutboxPublisher.Poison;
                String reason = poison ? ((OutboxPublisher.Poison) result).reason()
                        : ((OutboxPublisher.Retry) result).reason();
                failed.setString(1, poison ? "dead" : "new");
                failed.setString(2, reason.length() > MAX_ERROR ? reason.substring(0, MAX_ERROR) : reason);
                failed.setLong(3, record.position());
                failed.addBatch();
                if (!poison) {
                    resting.put(record.destination(), System.nanoTime() + rest.toNanos());
                }
                if (poison) {
                    dead++;
                    LOG.warn("outbox row {} (id {}) to {} is dead: {}", record.position(), record.id(),
                            record.destination(), reason);
                } else {
                    retried++;
                }
            }
            if (retried + dead > 0) {
                failed.executeBatch();
            }
        }
        // Published rows in statements of up to MARK_CHUNK positions each: one statement, not one per row.
        for (int from = 0; from < sent.size(); from += MARK_CHUNK) {
            List<Long> chunk = sent.subList(from, Math.min(sent.size(), from + MARK_CHUNK));
            String in = String.join(", ", java.util.Collections.nCopies(chunk.size(), "?"));
            try (PreparedStatement mark = connection.prepareStatement(keepSent
                    ? "update " + table + " set state = 'sent', sent_at = ? where position in (" + in + ")"
                    : "delete from " + table + " where position in (" + in + ")")) {
                int i = 1;
                if (keepSent) {
                    mark.setTimestamp(i++, now);
                }
                for (long position : chunk) {
                    mark.setLong(i++, position);
                }
                mark.executeUpdate();
            }
        }
        try (PreparedStatement served = connection.prepareStatement("update " + table
                + "_relay set served_at = ? where partition_no = ?")) {
            for (int partition : partitions) {
                served.setTimestamp(1, now);
                served.setInt(2, partition);
                served.addBatch();
            }
            served.executeBatch();
        }
        // A full batch means more is waiting, unless some of it failed: then the loop backs off.
        return new Pass(sent.size(), retried, dead, records.size() == batchSize && retried == 0);
    }

    private static Map<String, String> headers(@Nullable String json) {
        if (json == null || json.isEmpty()) {
            return Map.of();
        }
        try {
            Map<String, String> headers = new LinkedHashMap<>(JSON.readValue(json, HEADERS));
            headers.values().removeIf(Objects::isNull);
            return headers;
        } catch (IOException | RuntimeException e) {
            // Written by JdbcOutbox as JSON: another writer's row. Published without them, and said.
            LOG.warn("outbox headers are not a JSON object of strings, published without them: {}", json);
            return Map.of();
        }
    }
}
