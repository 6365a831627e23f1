package dev.idem.cli.ops;

import dev.idem.cli.Environment;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.Letter;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.jdbc.JdbcEffectLedger;
import dev.idem.core.spi.ClaimAdmin;
import dev.idem.core.spi.ClaimRecord;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Replays dead letters (decision 0021): a letter whose key is still dead has its dead state cleared
 * (the claim record, and in guarded mode the ledger's dead row), then its original message is sent
 * to the original topic; the replay counts once the broker acknowledged it, and is recorded. A key
 * applied since is not reset: its replay reaches the consumer as a duplicate. Thread-safe.
 */
public final class Replay {

    private final ClaimAdmin claims;
    private final Optional<JdbcEffectLedger> ledger;
    private final ReplayRecords records;
    private final DeadLetterTopic topic;
    private final String deadLetterTopic;
    private final Environment environment;

    /** A replay of entries of {@code deadLetterTopic}. */
    public Replay(Connections connections, DeadLetterTopic topic, String deadLetterTopic, Environment environment) {
        this.claims = connections.claims();
        this.ledger = connections.ledger();
        this.records = connections.records();
        this.topic = topic;
        this.deadLetterTopic = deadLetterTopic;
        this.environment = environment;
    }

    /**
     * What would be done with one letter.
     *
     * @param letter   the entry
     * @param previous its replay record, if any
     * @param send     whether it is sent
     * @param reset    whether its key is dead and is reset first
     * @param done     refused because there is nothing left to do: replayed before, or another entry
     *                 of its key is sent in this run (not a failure of the run)
     * @param note     what the operator should know: why it is refused, or the key's state
     */
    public record Plan(Letter letter, Optional<ReplayRecord> previous, boolean send, boolean reset, boolean done,
                       String note) {
    }

    /**
     * The outcome of one letter.
     *
     * @param letter  the entry
     * @param outcome {@code sent}, {@code refused} or {@code failed}
     * @param detail  where it was sent, or why not
     */
    public record Result(Letter letter, String outcome, String detail) {

        /** Whether the letter was sent and acknowledged. */
        public boolean sent() {
            return outcome.equals("sent");
        }
    }

    /** Decides what to do with {@code letter}; refuses a second replay unless {@code force}. */
    public Plan plan(Letter letter, Optional<ReplayRecord> previous, boolean force) {
        Optional<IdempotencyKey> key = letter.claimKey();
        if (key.isEmpty()) {
            return new Plan(letter, previous, false, false, false, "not an Idem dead letter (no idem- headers)");
        }
        Optional<ReplayRecord> replayed = previous.filter(r -> r.action().equals(ReplayRecord.REPLAYED));
        if (replayed.isPresent() && !force) {
            return new Plan(letter, previous, false, false, true,
                    "already " + replayed.get().summary() + "; --force to send again");
        }
        Optional<ClaimRecord> claim = claims.inspect(key.get());
        ClaimRecord.State state = claim.map(ClaimRecord::state).orElse(null);
        // Only a dead key is reset here (a running one is sent without a reset): the guard applies to it.
        Optional<String> refusal = claim.filter(c -> c.state() == ClaimRecord.State.DEAD).flatMap(ResetGuard::refusal);
        if (refusal.isPresent() && !force) {
            return new Plan(letter, previous, false, false, false, refusal.get() + ", or --force to drop it");
        }
        if (state == null) {
            return new Plan(letter, previous, true, false, false, "no claim record (expired or reset): sent as it is");
        }
        return switch (state) {
            case DEAD -> new Plan(letter, previous, true, true, false, "dead: reset, then sent");
            case DONE -> new Plan(letter, previous, true, false, false, "applied since: not reset, the consumer will report a duplicate");
            case CLAIMED, FAILED -> new Plan(letter, previous, true, false, false, "being processed (" + state.name().toLowerCase()
                    + "): sent without reset");
        };
    }

    /**
     * The plans of one run with each key sent once: of several entries of one key that would be sent
     * (a message dead-lettered again after an earlier replay), only the newest, the last one, is; the
     * others are refused naming it. Sending them all would reset and run the key once per copy.
     */
    public static List<Plan> oncePerKey(List<Plan> plans) {
        Map<IdempotencyKey, Integer> newest = new HashMap<>();
        for (int i = 0; i < plans.size(); i++) {
            Plan plan = plans.get(i);
            if (plan.send()) {
                newest.put(plan.letter().claimKey().orElseThrow(), i);
            }
        }
        List<Plan> once = new ArrayList<>(plans.size());
        for (int i = 0; i < plans.size(); i++) {
            Plan plan = plans.get(i);
            Integer kept = plan.send() ? newest.get(plan.letter().claimKey().orElseThrow()) : null;
            once.add(kept == null || kept == i ? plan : new Plan(plan.letter(), plan.previous(), false, false, true,
                    "same key as entry " + plans.get(kept).letter().entry() + ", the newest, sent in this run"));
        }
        return once;
    }

    /** Carries out a plan that sends: reset if dead, forget the ledger's dead row, send, record. */
    public CompletableFuture<Result> execute(Plan plan) {
        Letter letter = plan.letter();
        if (!plan.send()) {
            return CompletableFuture.completedFuture(new Result(letter, "refused", plan.note()));
        }
        IdempotencyKey key = letter.claimKey().orElseThrow();
        try {
            boolean deadInLedger = ledger.isPresent() && ledger.get().forgetDeadLetter(key);
            // Only a key that is still dead is reset: one applied meanwhile keeps its record. A DONE
            // record of a key the ledger held dead was written by a copy the ledger answered after
            // Redis lost the dead record (a duplicate, not an effect): it is reset too, or the
            // replay would be answered done and never run.
            ClaimRecord.State state = claims.inspect(key).map(ClaimRecord::state).orElse(null);
            if ((plan.reset() && state == ClaimRecord.State.DEAD) || (deadInLedger && state == ClaimRecord.State.DONE)) {
                claims.reset(key);
            }
        } catch (SQLException | RuntimeException e) {
            return CompletableFuture.completedFuture(new Result(letter, "failed", "not sent: " + Connections.rootMessage(e)));
        }
        int times = plan.previous().filter(r -> r.action().equals(ReplayRecord.REPLAYED)).map(ReplayRecord::times).orElse(0) + 1;
        return topic.resend(letter).handle((sentTo, failure) -> {
            if (failure != null) {
                return new Result(letter, "failed", "not acknowledged: " + Connections.rootMessage(failure));
            }
            try {
                records.put(topic.broker(), deadLetterTopic, letter.entry(), record(ReplayRecord.REPLAYED, letter, sentTo, times));
                return new Result(letter, "sent", sentTo);
            } catch (RuntimeException e) {
                return new Result(letter, "sent", sentTo + " (the replay record could not be stored: " + e.getMessage() + ")");
            }
        });
    }

    /** A record of {@code action} on {@code letter} by this operator, now. */
    public ReplayRecord record(String action, Letter letter, @Nullable String sentTo, int times) {
        return new ReplayRecord(action, environment.clock().instant().toString(), environment.host(), environment.user(),
                letter.idempotencyKey(), letter.idem().get(DeadLetterHeaders.LAST_FAILURE_AT), sentTo, times);
    }
}
