package dev.idem.spring.internal.kafka;

import dev.idem.kafka.PollResult;

/**
 * Idem asks the container to deliver records again (a failure to retry, a key another consumer holds,
 * Redis or the database unavailable); not a failure of the listener. {@link IdemErrorHandler} commits
 * what finished, seeks back and pauses, as the result says.
 */
final class RedeliveryRequested extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient PollResult result;

    RedeliveryRequested(String listener, PollResult result) {
        super("Idem listener '" + listener + "': redeliver from " + result.redeliveries(), null, false, false);
        this.result = result;
    }

    PollResult result() {
        return result;
    }
}
