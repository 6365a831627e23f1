package dev.idem.core.outbox;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A committed outbox row as the relay hands it to an {@link OutboxPublisher}: publish it to
 * {@code destination} with {@code key}, {@code value}, {@code headers}, and the {@link OutboxHeaders}
 * ({@code id}, {@code traceParent} when there is one).
 *
 * @param position    its place in the table (rows of one key are published in this order)
 * @param id          its stable id ({@link OutboxHeaders#MESSAGE_ID})
 * @param destination the topic
 * @param key         the message key, or null
 * @param value       the value, or null
 * @param headers     the application's headers
 * @param traceParent the sending run's W3C trace context, or null
 * @param createdAt   when it was written
 * @param attempts    how many publications of it failed so far
 */
public record OutboxRecord(long position, String id, String destination, @Nullable String key,
                           byte @Nullable [] value, Map<String, String> headers, @Nullable String traceParent,
                           Instant createdAt, int attempts) {

    public OutboxRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(destination, "destination");
        headers = Map.copyOf(headers);
        Objects.requireNonNull(createdAt, "createdAt");
    }

    @Override
    public String toString() {
        return "OutboxRecord[" + position + ", " + id + " to " + destination + (key != null ? ", key " + key : "") + "]";
    }
}
