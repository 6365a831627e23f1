package dev.idem.core.jdbc;

import dev.idem.core.Delivery;
import java.sql.Connection;

/**
 * A handler whose effect is written through the given connection, inside the transaction that
 * also records the effect in the ledger. It must not commit, roll back or close the connection.
 *
 * @param <T> payload type
 */
@FunctionalInterface
public interface TransactionalHandler<T> {

    /**
     * @throws Exception when the effect could not be applied; the transaction is rolled back
     */
    void handle(Delivery<T> delivery, Connection transaction) throws Exception;
}
