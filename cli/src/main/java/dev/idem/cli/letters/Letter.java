package dev.idem.cli.letters;

import dev.idem.core.DeadLetter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.Envelope;
import dev.idem.core.FailureGroup;
import dev.idem.core.IdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One entry of a dead-letter topic: where it sits, the original message (key, value, headers without
 * Idem's; RocketMQ tags and keys) and Idem's {@code idem-} headers. Immutable; arrays are not copied.
 *
 * @param entry     where it sits: {@code <partition>:<offset>} (Kafka), {@code <broker>:<queue>:<offset>} (RocketMQ)
 * @param key       the message key (Kafka record key), or null
 * @param value     the payload, or null (a Kafka tombstone)
 * @param headers   the original headers or user properties, in order, without {@code idem-} ones
 * @param idem      Idem's headers by full name ({@code idem-reason}...); the stack trace only when read in full
 * @param tags      RocketMQ tags, or null
 * @param keys      RocketMQ keys, or null
 * @param timestamp when the dead letter was written, or null
 */
public record Letter(String entry, byte @Nullable [] key, byte @Nullable [] value, List<Header> headers,
                     Map<String, String> idem,
                     @Nullable String tags, @Nullable String keys, @Nullable Instant timestamp) {

    // Idem's headers in the order DeadLetter writes them, taken from a letter with every header set.
    private static final List<String> IDEM_ORDER = List.copyOf(new DeadLetter(new IdempotencyKey("g", "t", "k"), 1L,
            new Envelope("t", 0, "0", "t-0@0", 1, Map.of(), new byte[0]), 1, "r", "e", "m", "s", Instant.EPOCH,
            Instant.EPOCH, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").headers().keySet());

    // The W3C trace context headers, replaced on a replay.
    private static final Set<String> TRACE_HEADERS = Set.of("traceparent", "tracestate");

    /** @throws NullPointerException if entry, headers or idem is null */
    public Letter {
        Objects.requireNonNull(entry, "entry");
        headers = List.copyOf(headers);
        // In the order Idem writes them: Kafka keeps it, RocketMQ's user properties (a hash map) do not.
        Map<String, String> ordered = new LinkedHashMap<>();
        for (String name : IDEM_ORDER) {
            if (idem.containsKey(name)) {
                ordered.put(name, idem.get(name));
            }
        }
        ordered.putAll(idem);
        idem = Collections.unmodifiableMap(ordered);
    }

    /**
     * Idem's headers of a letter as read, with its failure group where a letter written before Idem
     * wrote groups lacks it (from its stack trace), and without the stack trace unless read in full.
     */
    static Map<String, String> idemHeaders(Map<String, String> read, boolean full) {
        Map<String, String> idem = new LinkedHashMap<>(read);
        if (!idem.containsKey(DeadLetterHeaders.FAILURE_GROUP) && idem.containsKey(DeadLetterHeaders.REASON)) {
            FailureGroup group = FailureGroup.of(idem.get(DeadLetterHeaders.EXCEPTION_CLASS),
                    idem.get(DeadLetterHeaders.EXCEPTION_STACKTRACE), idem.get(DeadLetterHeaders.REASON));
            idem.put(DeadLetterHeaders.FAILURE_GROUP, group.fingerprint());
            if (!group.site().isEmpty()) {
                idem.put(DeadLetterHeaders.FAILURE_SITE, group.site());
            }
        }
        if (!full) {
            idem.remove(DeadLetterHeaders.EXCEPTION_STACKTRACE);
        }
        return idem;
    }

    /**
     * The headers a replay sends: the original message's, with its trace context replaced by the
     * failing run's where that was traced, and {@code idem-replay-of} naming that run, so the replayed
     * run shows in the original trace, under the run that dead-lettered it, and links to it.
     */
    public List<Header> replayHeaders() {
        String failing = idem.get(DeadLetterHeaders.TRACE_PARENT);
        if (failing == null) {
            return headers;
        }
        List<Header> replay = new ArrayList<>(headers.size() + 2);
        headers.stream().filter(h -> !TRACE_HEADERS.contains(h.name())).forEach(replay::add);
        replay.add(new Header("traceparent", failing.getBytes(StandardCharsets.UTF_8)));
        replay.add(new Header(DeadLetterHeaders.REPLAY_OF, failing.getBytes(StandardCharsets.UTF_8)));
        return List.copyOf(replay);
    }

    /** The id of the dead-lettering it reports ({@code idem-compensation-id}), or null for a letter Idem did not write. */
    public @Nullable String compensationId() {
        return idem.get(DeadLetterHeaders.COMPENSATION_ID);
    }

    /** Its failure group's fingerprint, or null for a letter Idem did not write. */
    public @Nullable String failureGroup() {
        return idem.get(DeadLetterHeaders.FAILURE_GROUP);
    }

    /** The first application frame its failure passed through, or null. */
    public @Nullable String failureSite() {
        return idem.get(DeadLetterHeaders.FAILURE_SITE);
    }

    /** The trace id of the run that dead-lettered it, or null where it was not traced. */
    public @Nullable String traceId() {
        String parent = idem.get(DeadLetterHeaders.TRACE_PARENT);
        String[] parts = parent == null ? new String[0] : parent.split("-");
        return parts.length == 4 && parts[1].length() == 32 ? parts[1] : null;
    }

    /**
     * A header of the original message; its value may be null (Kafka allows it).
     *
     * @param name  header name
     * @param value header value, or null
     */
    public record Header(String name, byte[] value) {
    }

    /** The consumer group that dead-lettered it, or null. */
    public @Nullable String group() {
        return idem.get(DeadLetterHeaders.CONSUMER_GROUP);
    }

    /** The topic the message came from, or null. */
    public @Nullable String originalTopic() {
        return idem.get(DeadLetterHeaders.ORIGINAL_TOPIC);
    }

    /** The partition or queue id the message came from, or -1. */
    public int originalPartition() {
        return number(idem.get(DeadLetterHeaders.ORIGINAL_PARTITION));
    }

    /** The idempotency key's value, or null. */
    public @Nullable String idempotencyKey() {
        return idem.get(DeadLetterHeaders.IDEMPOTENCY_KEY);
    }

    /** The key of its claim record, if the letter names group, original topic and key. */
    public Optional<IdempotencyKey> claimKey() {
        if (group() == null || originalTopic() == null || idempotencyKey() == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new IdempotencyKey(group(), originalTopic(), idempotencyKey()));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** Handler attempts made, or -1 when unknown. */
    public int attempts() {
        return number(idem.get(DeadLetterHeaders.ATTEMPTS));
    }

    /** Why it was dead-lettered, or null. */
    public @Nullable String reason() {
        return idem.get(DeadLetterHeaders.REASON);
    }

    /** Class of the last failure, or null. */
    public @Nullable String exceptionClass() {
        return idem.get(DeadLetterHeaders.EXCEPTION_CLASS);
    }

    /** When it failed the last time, or null when unknown. */
    public @Nullable Instant failedAt() {
        String text = idem.get(DeadLetterHeaders.LAST_FAILURE_AT);
        if (text == null) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** Whether Idem wrote it (it carries the headers a replay needs). */
    public boolean fromIdem() {
        return claimKey().isPresent();
    }

    private static int number(@Nullable String text) {
        if (text == null) {
            return -1;
        }
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
