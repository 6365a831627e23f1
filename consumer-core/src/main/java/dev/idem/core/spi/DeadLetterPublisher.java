package dev.idem.core.spi;

import dev.idem.core.DeadLetter;

/**
 * Publishes dead letters to the broker; adapters implement it. {@link #publish} returns only once
 * the broker acknowledged the message. Implementations are thread-safe.
 */
@FunctionalInterface
public interface DeadLetterPublisher {

    /**
     * Publishes and waits for the broker's acknowledgement.
     *
     * @throws Exception if the broker did not acknowledge; the source message is then not
     *                   acknowledged either and comes back later
     */
    void publish(DeadLetter deadLetter) throws Exception;
}
