package dev.idem.benchmarks.soak;

import dev.idem.core.DeadLetter;
import dev.idem.core.Delivery;
import dev.idem.core.Outcome;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a soak consumer does with a message: records the handler call (committed whatever happens),
 * waits a few milliseconds to widen every window, fails as the id's {@link Kind} says, and writes
 * the effect in the ledger's transaction. The compensation writes a row of its own. Outcomes are
 * counted and written to a file twice a second. Thread-safe.
 */
final class SoakWork {

    // Up to 20 ms per handler: long enough that copies on other consumers overlap, short enough for
    // a few hundred messages per second on two cores.
    private static final int MAX_HANDLER_MILLIS = 20;

    private final Tables tables;
    private final int slot;
    private final long pid = ProcessHandle.current().pid();
    private final ThreadConnections ledger;
    private final ThreadConnections calls;
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();

    /**
     * @param ledger the connections the ledger (and so the effects) use
     * @param calls  connections of their own for call rows, which must survive a rollback
     */
    SoakWork(Tables tables, int slot, ThreadConnections ledger, ThreadConnections calls) {
        this.tables = tables;
        this.slot = slot;
        this.ledger = ledger;
        this.calls = calls;
    }

    /** Guarded mode: the effect commits with the ledger row, in {@code transaction}. */
    void handle(Delivery<String> delivery, Connection transaction) throws Exception {
        String id = delivery.payload();
        Kind kind = Kind.of(id);
        String note = switch (kind) {
            case POISON -> "poison";
            case TRANSIENT -> delivery.attempt() <= Kind.TRANSIENT_FAILURES ? "transient" : "apply";
            case GOOD -> "apply";
        };
        insert(calls.connection(), tables.calls(), id, delivery.attempt(), delivery.fence(), note);
        Thread.sleep(ThreadLocalRandom.current().nextInt(MAX_HANDLER_MILLIS + 1));
        if (!note.equals("apply")) {
            throw new IllegalStateException(note + " failure of " + id + " at attempt " + delivery.attempt());
        }
        insert(transaction, tables.effects(), id, delivery.attempt(), delivery.fence(), null);
    }

    /** Redis-only mode: the effect commits on its own, guarded by the Redis claim alone. */
    void handleUnguarded(Delivery<String> delivery) throws Exception {
        handle(delivery, ledger.connection());
    }

    void compensate(DeadLetter letter) throws SQLException {
        // Autocommit: a compensation is its own effect, after the dead letter is published.
        insert(ledger.connection(), tables.compensations(), letter.key().value(), letter.attempts(), 0,
                letter.reason().length() > 200 ? letter.reason().substring(0, 200) : letter.reason());
    }

    void outcome(Outcome outcome) {
        outcomes.computeIfAbsent(outcome.getClass().getSimpleName(), name -> new LongAdder()).increment();
    }

    /** Writes the outcome counts to {@code file}, replacing it at once (a kill leaves the last full copy). */
    void writeCounts(Path file) throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        outcomes.forEach((name, count) -> counts.put(name, count.sum()));
        StringBuilder text = new StringBuilder();
        counts.forEach((name, count) -> text.append(name).append('=').append(count).append('\n'));
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private void insert(Connection connection, String table, String id, int attempt, long fence, String note)
            throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement("insert into " + table
                + " (id, slot, pid, attempt, fence, note) values (?, ?, ?, ?, ?, ?)")) {
            insert.setString(1, id);
            insert.setInt(2, slot);
            insert.setLong(3, pid);
            insert.setInt(4, attempt);
            insert.setLong(5, fence);
            insert.setString(6, note);
            insert.executeUpdate();
        }
    }
}
