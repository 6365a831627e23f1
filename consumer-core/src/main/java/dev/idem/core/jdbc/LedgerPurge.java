package dev.idem.core.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** Deletes the ledger's old rows in small batches, never under the retention the claim store relies on. */
final class LedgerPurge {

    private final DataSource dataSource;
    private final String table;
    private final Duration retention;
    private final Clock clock;

    LedgerPurge(DataSource dataSource, String table, Duration retention, Clock clock) {
        this.dataSource = dataSource;
        this.table = table;
        this.retention = retention;
        this.clock = clock;
    }

    /**
     * Deletes rows applied before {@code age} ago, {@code batchSize} rows per transaction, so a
     * large purge never holds long locks. Deleted keys are no longer recognised as duplicates.
     *
     * @return rows deleted
     * @throws IllegalArgumentException if age is shorter than the retention or batchSize below 1
     */
    long purgeOlderThan(Duration age, int batchSize) throws SQLException {
        if (age == null || age.compareTo(retention) < 0) {
            throw new IllegalArgumentException("age must be >= the ledger's retention (" + retention + ") but was "
                    + age + ": the claim store's done window relies on it");
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1 but was " + batchSize);
        }
        Timestamp cutoff = Timestamp.from(clock.instant().minus(age));
        long deleted = 0;
        try (Connection connection = dataSource.getConnection()) {
            while (true) {
                List<String[]> keys = new ArrayList<>(batchSize);
                try (PreparedStatement select = connection.prepareStatement("select consumer_group, topic, "
                        + "idempotency_key from " + table + " where applied_at < ?")) {
                    select.setMaxRows(batchSize);
                    select.setTimestamp(1, cutoff);
                    try (ResultSet rows = select.executeQuery()) {
                        while (rows.next()) {
                            keys.add(new String[] {rows.getString(1), rows.getString(2), rows.getString(3)});
                        }
                    }
                }
                if (keys.isEmpty()) {
                    return deleted;
                }
                try (PreparedStatement delete = connection.prepareStatement("delete from " + table
                        + " where consumer_group = ? and topic = ? and idempotency_key = ?")) {
                    for (String[] key : keys) {
                        delete.setString(1, key[0]);
                        delete.setString(2, key[1]);
                        delete.setString(3, key[2]);
                        delete.addBatch();
                    }
                    for (int count : delete.executeBatch()) {
                        deleted += Math.max(count, 0);
                    }
                }
            }
        }
    }
}
