package dev.idem.cli.letters;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A broker's dead-letter topics as the command sees them: scan, read one entry, send an original
 * message again. Implementations report an unknown topic or an unreachable broker as a
 * {@link dev.idem.cli.CliException}. Not thread-safe unless stated.
 */
public interface DeadLetterTopic extends AutoCloseable {

    /** The broker's name in commands and replay records: {@code kafka} or {@code rocketmq}. */
    String broker();

    /**
     * Every entry of {@code topic} that {@code filter} accepts, in position order, read up to the end
     * the topic had when the scan began. Stack traces are left out.
     */
    Scan scan(String topic, LetterFilter filter);

    /** One entry, every header included; empty if there is none at that position. */
    Optional<Letter> read(String topic, String entry);

    /**
     * Sends the letter's original message (key, value, headers without {@code idem-} ones) to its
     * original topic. Thread-safe.
     *
     * @return the new message's position, once the broker acknowledged it
     */
    CompletableFuture<String> resend(Letter letter);

    /** Checks an entry's form, e.g. {@code 0:17} for Kafka; throws a {@link dev.idem.cli.CliException} if wrong. */
    String entry(String text);

    @Override
    void close();

    /**
     * What a scan found.
     *
     * @param letters the entries the filter accepted
     * @param scanned how many entries were read
     * @param millis  how long it took
     */
    record Scan(List<Letter> letters, long scanned, long millis) {
    }
}
