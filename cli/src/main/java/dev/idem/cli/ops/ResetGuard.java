package dev.idem.cli.ops;

import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.CompensationOutcome;
import java.util.Optional;

/**
 * Why a claim record must not be reset without {@code --force}, for every command that resets one
 * ({@code claims reset}, {@code dlq replay}): a compensation still pending (resetting drops it, and a
 * replay would dead-letter the message again instead of running it), or a handler running under a
 * live claim (the next delivery would run beside it).
 */
public final class ResetGuard {

    private ResetGuard() {
    }

    /** The reason to refuse a reset of {@code record}, or empty when it may be reset. */
    public static Optional<String> refusal(ClaimRecord record) {
        if (record.state() == ClaimRecord.State.DEAD && record.compensation().filter(CompensationOutcome::isPending).isPresent()) {
            return Optional.of("its compensation is pending: finish it first (idem compensations pending --run)");
        }
        if (record.state() == ClaimRecord.State.CLAIMED) {
            return Optional.of("it is running" + record.owner().map(o -> " (owner " + o + ")").orElse("")
                    + ": wait for its outcome");
        }
        return Optional.empty();
    }
}
