package dev.idem.redis;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.ClaimStoreException;
import dev.idem.core.spi.CompensationOutcome;
import dev.idem.core.spi.FailureCount;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The grammar of claim records and of the script's replies (claims.lua explains both), read in
 * this one place. Free text is stored after a separator that must not appear inside it.
 */
final class ClaimRecords {

    static final char TEXT_SEPARATOR = '\u001f';
    private static final String SEPARATOR = String.valueOf(TEXT_SEPARATOR);

    private ClaimRecords() {
    }

    /**
     * Free text as it may be stored: without the record's separator, nor the one that joins a call's
     * replies ({@link RedisScripts#JOINED}), so that what is stored is what a claim answers.
     */
    static String text(String text) {
        return text == null ? "" : text.replace(TEXT_SEPARATOR, ' ').replace(RedisScripts.JOINED, ' ');
    }

    /** The same answer for another key. */
    static Claim.Claimed rekeyed(Claim.Claimed claim, IdempotencyKey key) {
        return new Claim.Claimed(key, claim.fence(), claim.attempt(), claim.failures(), claim.abandoned(),
                claim.fresh(), claim.firstFailureAt(), claim.lastError(), claim.deadLetterReason());
    }

    /** One reply of the claim operation. */
    static Claim claim(IdempotencyKey key, String reply) {
        switch (reply.isEmpty() ? "" : reply.substring(0, 1)) {
            case "D":
                return new Claim.Done(key);
            case "X":
                return new Claim.Dead(key);
            case "?":
                return new Claim.Unreadable(key, "a value that is not an Idem claim record");
            case "B":
                return new Claim.Busy(key, Duration.ofMillis(Long.parseLong(reply.substring(2))));
            case "K": {
                // K:<attempts>:<fence>:<error>\31<reason>
                String[] f = reply.split(":", 4);
                String[] text = f[3].split(SEPARATOR, -1);
                return new Claim.Compensate(key, Long.parseLong(f[2]), Integer.parseInt(f[1]), present(text[0]),
                        text[1]);
            }
            case "C": {
                // C:<fence>:<attempt>:<failures>:<abandoned>:<fresh>:<ff>:<error>\31<reason>
                String[] f = reply.split(":", 8);
                String[] text = f[7].split(SEPARATOR, -1);
                return new Claim.Claimed(key, Long.parseLong(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                        f[4].equals("1"), f[5].equals("1"),
                        f[6].isEmpty() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(Long.parseLong(f[6]))),
                        present(text[0]), present(text[1]));
            }
            default:
                throw new ClaimStoreException("unexpected claim reply '" + reply + "' for " + key, null);
        }
    }

    /** The reply of the fail operation: 'attempts:failures:first failure ms', or '' if not the owner. */
    static Optional<FailureCount> failureCount(String reply) {
        if (reply == null || reply.isEmpty()) {
            return Optional.empty();
        }
        String[] f = reply.split(":");
        return Optional.of(new FailureCount(Integer.parseInt(f[0]), Integer.parseInt(f[1]),
                Instant.ofEpochMilli(Long.parseLong(f[2]))));
    }

    /**
     * A stored value, for inspection; empty when there is none.
     *
     * @throws IllegalArgumentException if the value is not a claim record
     */
    static Optional<ClaimRecord> record(String value, Duration ttl) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        if (value.equals("D")) {
            return Optional.of(new ClaimRecord(ClaimRecord.State.DONE, Optional.empty(), 0, 0, 0, Optional.empty(),
                    Optional.empty(), Optional.empty(), ttl));
        }
        // s|owner|lease|fence|attempts|failures|u|ff|due \31 error \31 compensation \31 reason
        String[] text = value.split(SEPARATOR, -1);
        String[] f = text[0].split("\\|", -1);
        if (text.length != 4 || f.length != 9) {
            throw new IllegalArgumentException("not an Idem claim record: '" + value + "'");
        }
        ClaimRecord.State state = switch (f[0]) {
            case "C" -> ClaimRecord.State.CLAIMED;
            case "X" -> ClaimRecord.State.DEAD;
            case "F" -> ClaimRecord.State.FAILED;
            default -> throw new IllegalArgumentException("not an Idem claim record: '" + value + "'");
        };
        return Optional.of(new ClaimRecord(state, present(f[1]), Long.parseLong(f[3]), Integer.parseInt(f[4]),
                Integer.parseInt(f[5]), present(text[1]), present(text[2]).map(CompensationOutcome::parse),
                present(text[3]), ttl));
    }

    private static Optional<String> present(String text) {
        return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }
}
