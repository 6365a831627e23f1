package dev.idem.listener;

import dev.idem.core.Delivery;
import java.sql.Connection;
import org.jspecify.annotations.Nullable;

/** What Idem calls for one message of a listener: an annotated bean method, or a framework's listener it wraps. */
public interface ListenerHandler {

    /**
     * Runs the listener for one delivery; {@code tx} is the ledger transaction's connection, or null in
     * Redis-only mode. Throws what the listener threw.
     */
    void invoke(Delivery<Object> delivery, @Nullable Connection tx) throws Exception;

    /** Whether the listener asks for the transaction's connection (it then needs the ledger). */
    default boolean wantsConnection() {
        return false;
    }
}
