package dev.idem.core.outbox;

import dev.idem.core.Delivery;
import dev.idem.core.IdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;

/**
 * What one handler run sends, on the run's transaction: its n-th message gets an id derived from
 * the incoming message's key and n, so a re-run (after a rollback, a lost lease, a crash) writes the
 * same ids, and a copy of a committed message cannot be written (the id is unique in the table).
 * Get it from {@link JdbcOutbox#sends}; one per run, on the run's thread.
 */
public final class OutboxSends {

    private final JdbcOutbox outbox;
    private final Delivery<?> delivery;
    private final Connection transaction;
    private int sent;

    OutboxSends(JdbcOutbox outbox, Delivery<?> delivery, Connection transaction) {
        this.outbox = outbox;
        this.delivery = delivery;
        this.transaction = transaction;
    }

    /**
     * Writes {@code message} to the outbox on the run's transaction; it is published once that
     * commits.
     *
     * @return the message's id ({@link OutboxHeaders#MESSAGE_ID})
     * @throws SQLException when the row cannot be written (the transaction is then rolled back by the
     *                      caller, and the message retried as any failure)
     */
    public String send(OutboxMessage message) throws SQLException {
        int place = sent++;
        String id = message.id() != null ? message.id() : derivedId(delivery.key(), place);
        outbox.insert(transaction, message, id);
        return id;
    }

    boolean of(JdbcOutbox outbox, Delivery<?> delivery, Connection transaction) {
        return this.outbox == outbox && this.delivery == delivery && this.transaction == transaction;
    }

    /** A name-based UUID of the incoming key and the send's place in the run. */
    static String derivedId(IdempotencyKey key, int place) {
        String name = "idem-outbox\n" + key.group() + "\n" + key.topic() + "\n" + key.value() + "\n" + place;
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
    }
}
