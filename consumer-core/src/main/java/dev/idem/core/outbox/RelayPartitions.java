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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One relay pass over the outbox's partitions: each partition whose relay row this process can lock
 * (rows another relay holds are skipped, {@code FOR UPDATE SKIP LOCKED}) has its oldest unsent rows
 * published in position order and marked, all in the transaction that holds the lock, so no two
 * relays publish one partition at once and a relay that dies leaves its rows for the next.
 */
final class RelayPartitions {

    private static final Logger LOG = LoggerFactory.getLogger(RelayPartitions.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };
    private static final int MAX_ERROR = 1000;

    /** What a pass did: rows published, failed for now, sent to the dead state; whether a partition had more. */
    record Pass(int published, int retried, int dead, boolean more) {
    }

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final OutboxPublisher publisher;
    private final int batchSize;
    private final boolean keepSent;
    private int first;

    RelayPartitions(DataSource dataSource, String table, Clock clock, OutboxPublisher publisher, int batchSize,
                    Duration keepSent) {
        this.dataSource = dataSource;
        this.table = table;
        this.clock = clock;
        this.publisher = publisher;
        this.batchSize = batchSize;
        this.keepSent = !keepSent.isZero();
    }

    /**
     * One pass over every partition, starting one further each time so none is always last. A
     * partition whose publisher fails is logged and counted as retried, and the pass goes on; the
     * database failing ends the pass.
     */
    Pass pass() throws SQLException, InterruptedException {
        int published = 0;
        int retried = 0;
        int dead = 0;
        boolean more = false;
        int start = first;
        first = (first + 1) % JdbcOutbox.PARTITIONS;
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(false);
            try {
                boolean any = anyUnsent(connection);
                // Its snapshot ends here: on MySQL a partition read in it would miss another relay's marks.
                connection.rollback();
                if (!any) {
                    return new Pass(0, 0, 0, false);
                }
                for (int i = 0; i < JdbcOutbox.PARTITIONS; i++) {
                    int partition = (start + i) % JdbcOutbox.PARTITIONS;
                    Pass one;
                    try {
                        one = drain(connection, partition);
                    } catch (RuntimeException e) {
                        LOG.warn("outbox relay on {}: publishing partition {} failed; tried again later", table,
                                partition, e);
                        one = new Pass(0, 1, 0, false);
                    }
                    published += one.published();
                    retried += one.retried();
                    dead += one.dead();
                    more |= one.more();
                }
            } finally {
                connection.setAutoCommit(autoCommit);
            }
        }
        return new Pass(published, retried, dead, more);
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

    /** Publishes one partition's oldest unsent rows while holding its lock; nothing when another relay holds it. */
    private Pass drain(Connection connection, int partition) throws SQLException, InterruptedException {
        try {
            if (!lock(connection, partition)) {
                connection.rollback();
                return new Pass(0, 0, 0, false);
            }
            List<OutboxRecord> records = unsent(connection, partition);
            if (records.isEmpty()) {
                connection.commit();
                return new Pass(0, 0, 0, false);
            }
            List<OutboxPublisher.Result> results = publisher.publish(records);
            if (results.size() != records.size()) {
                throw new IllegalStateException("publisher " + publisher + " answered " + results.size()
                        + " results for " + records.size() + " records");
            }
            Pass pass = mark(connection, partition, records, results);
            connection.commit();
            return pass;
        } catch (SQLException | InterruptedException | RuntimeException e) {
            try {
                connection.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            throw e;
        }
    }

    private boolean lock(Connection connection, int partition) throws SQLException {
        try (PreparedStatement lock = connection.prepareStatement("select partition_no from " + table
                + "_relay where partition_no = ? for update skip locked")) {
            lock.setInt(1, partition);
            try (ResultSet rows = lock.executeQuery()) {
                return rows.next();
            }
        }
    }

    private List<OutboxRecord> unsent(Connection connection, int partition) throws SQLException {
        List<OutboxRecord> records = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("select position, id, destination, message_key, "
                + "payload, headers, traceparent, created_at, attempts from " + table
                + " where partition_no = ? and state = 'new' order by position")) {
            select.setMaxRows(batchSize);
            select.setInt(1, partition);
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

    private Pass mark(Connection connection, int partition, List<OutboxRecord> records,
                      List<OutboxPublisher.Result> results) throws SQLException {
        int published = 0;
        int retried = 0;
        int dead = 0;
        Timestamp now = Timestamp.from(clock.instant());
        try (PreparedStatement sent = connection.prepareStatement(keepSent
                     ? "update " + table + " set state = 'sent', sent_at = ? where position = ?"
                     : "delete from " + table + " where position = ?");
             PreparedStatement failed = connection.prepareStatement("update " + table
                     + " set state = ?, attempts = attempts + 1, last_error = ? where position = ?")) {
            for (int i = 0; i < records.size(); i++) {
                OutboxRecord record = records.get(i);
                OutboxPublisher.Result result = results.get(i);
                if (result instanceof OutboxPublisher.Published) {
                    if (keepSent) {
                        sent.setTimestamp(1, now);
                        sent.setLong(2, record.position());
                    } else {
                        sent.setLong(1, record.position());
                    }
                    sent.addBatch();
                    published++;
                } else {
                    boolean poison = result instanceof OutboxPublisher.Poison;
                    String reason = poison ? ((OutboxPublisher.Poison) result).reason()
                            : ((OutboxPublisher.Retry) result).reason();
                    failed.setString(1, poison ? "dead" : "new");
                    failed.setString(2, reason.length() > MAX_ERROR ? reason.substring(0, MAX_ERROR) : reason);
                    failed.setLong(3, record.position());
                    failed.addBatch();
                    if (poison) {
                        dead++;
                        LOG.warn("outbox row {} (id {}) to {} is dead: {}", record.position(), record.id(),
                                record.destination(), reason);
                    } else {
                        retried++;
                    }
                }
            }
            if (published > 0) {
                sent.executeBatch();
            }
            if (retried + dead > 0) {
                failed.executeBatch();
            }
        }
        try (PreparedStatement served = connection.prepareStatement("update " + table
                + "_relay set served_at = ? where partition_no = ?")) {
            served.setTimestamp(1, now);
            served.setInt(2, partition);
            served.executeUpdate();
        }
        return new Pass(published, retried, dead, records.size() == batchSize);
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
