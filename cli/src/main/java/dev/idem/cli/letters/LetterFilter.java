package dev.idem.cli.letters;

import java.time.Instant;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Which dead letters a command acts on; every condition given must hold. Immutable.
 *
 * @param entries   positions ({@code 0:17}); empty for any
 * @param keys      idempotency keys; empty for any
 * @param group     consumer group, or null for any
 * @param topic     original topic, or null for any
 * @param exception exception class (full or simple name), or null for any
 * @param from      failed at or after, or null
 * @param to        failed before, or null
 * @param failure   failure group fingerprint ({@code idem dlq list --groups}; "-" for letters Idem did not
 *                  write), or null for any
 */
public record LetterFilter(Set<String> entries, Set<String> keys, @Nullable String group, @Nullable String topic,
                           @Nullable String exception, @Nullable Instant from, @Nullable Instant to,
                           @Nullable String failure) {

    /** Every letter. */
    public static final LetterFilter ALL = new LetterFilter(Set.of(), Set.of(), null, null, null, null, null, null);

    /** Copies the sets. */
    public LetterFilter {
        entries = Set.copyOf(entries);
        keys = Set.copyOf(keys);
    }

    /** Whether no condition is given. */
    public boolean isEmpty() {
        return equals(ALL);
    }

    /** Whether {@code letter} meets every condition. */
    public boolean matches(Letter letter) {
        if (!entries.isEmpty() && !entries.contains(letter.entry())) {
            return false;
        }
        if (!keys.isEmpty() && !keys.contains(letter.idempotencyKey())) {
            return false;
        }
        if (group != null && !group.equals(letter.group())) {
            return false;
        }
        if (topic != null && !topic.equals(letter.originalTopic())) {
            return false;
        }
        if (exception != null && !sameClass(letter.exceptionClass(), exception)) {
            return false;
        }
        if (failure != null && !failure.equalsIgnoreCase(letter.failureGroup() == null ? "-" : letter.failureGroup())) {
            return false;
        }
        if (from != null || to != null) {
            Instant failedAt = letter.failedAt();
            return failedAt != null && (from == null || !failedAt.isBefore(from)) && (to == null || failedAt.isBefore(to));
        }
        return true;
    }

    /** {@code java.lang.IllegalStateException} is matched by itself and by {@code IllegalStateException}. */
    private static boolean sameClass(@Nullable String actual, String wanted) {
        return actual != null && (actual.equals(wanted) || actual.endsWith("." + wanted) || actual.endsWith("$" + wanted));
    }
}
