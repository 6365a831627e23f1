package dev.idem.core.outbox;

import java.sql.SQLException;

/** An outbox row that could not be written, unchecked for {@link Outbox}; its cause is the {@link SQLException}. */
public final class OutboxException extends RuntimeException {

    private static final long serialVersionUID = 1L;
    private final SQLException sqlException;

    public OutboxException(SQLException cause) {
        super(cause.getMessage(), cause);
        this.sqlException = cause;
    }

    /** The database's error: its SQL state and vendor code say what went wrong. */
    public SQLException sqlException() {
        return sqlException;
    }
}
