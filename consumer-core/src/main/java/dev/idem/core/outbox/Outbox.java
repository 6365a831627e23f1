package dev.idem.core.outbox;

/**
 * Sends through the outbox on the transaction the caller is in: what Spring Boot and Micronaut
 * inject, joined to their transaction managers, so a listener method or any {@code @Transactional}
 * bean sends with no connection in hand. Ids as {@link JdbcOutbox#send}: derived in a handler run,
 * else given or random. Thread-safe.
 */
@FunctionalInterface
public interface Outbox {

    /**
     * Writes {@code message} on the caller's transaction; it is published once that commits.
     *
     * @return the message's id ({@link OutboxHeaders#MESSAGE_ID})
     * @throws IllegalStateException when the caller is in no transaction on the outbox's data source
     *                               (the row would commit on its own, with no effect beside it)
     * @throws OutboxException       when the row cannot be written; the transaction should roll back
     */
    String send(OutboxMessage message);
}
