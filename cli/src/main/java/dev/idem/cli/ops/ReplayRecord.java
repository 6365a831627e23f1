package dev.idem.cli.ops;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.idem.cli.letters.Letter;
import dev.idem.core.DeadLetterHeaders;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What an operator did to one dead-letter entry: replayed it, purged it, or resent it to finish its
 * compensation. Identifies the letter by key and failure time as well as by position, so a topic
 * deleted and created again (positions start over) does not inherit the old records. Immutable.
 *
 * @param action   {@code replayed}, {@code purged} or {@code compensation}
 * @param at       when (ISO-8601)
 * @param host     on which machine
 * @param user     by which user
 * @param key      the letter's idempotency key
 * @param failedAt the letter's {@code idem-last-failure-at}
 * @param sentTo   where the resent message went, or null
 * @param times    how many times this entry was replayed (more than once only with {@code --force})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReplayRecord(String action, String at, String host, String user, @Nullable String key,
                           @Nullable String failedAt, @Nullable String sentTo, int times) {

    /** Replayed to the original topic. */
    public static final String REPLAYED = "replayed";
    /** Hidden from listings and left out of replays. */
    public static final String PURGED = "purged";
    /** Resent to finish a compensation. */
    public static final String COMPENSATION = "compensation";

    /** Whether this record was written for {@code letter} (and not for an earlier letter at its position). */
    public boolean describes(Letter letter) {
        return Objects.equals(key, letter.idempotencyKey())
                && Objects.equals(failedAt, letter.idem().get(DeadLetterHeaders.LAST_FAILURE_AT));
    }

    /** "replayed 2026-11-22T03:12:00Z by alice@ops-1". */
    public String summary() {
        return action + " " + at + " by " + user + "@" + host + (times > 1 ? " (" + times + " times)" : "");
    }
}
