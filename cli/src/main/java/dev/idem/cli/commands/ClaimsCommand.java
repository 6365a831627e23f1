package dev.idem.cli.commands;

import dev.idem.cli.Idem;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.ResetGuard;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimRecord;
import dev.idem.core.spi.CompensationOutcome;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code idem claims}: one key's claim record. */
@Command(name = "claims", description = "Show or reset the claim record of one key.",
        subcommands = {ClaimsCommand.Show.class, ClaimsCommand.Reset.class})
public final class ClaimsCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is missing: show or reset");
    }

    /** The key named on the command line. */
    abstract static class KeyCommand extends Subcommand {

        @Parameters(index = "0", paramLabel = "<group>", description = "Consumer group")
        String group;

        @Parameters(index = "1", paramLabel = "<key>", description = "Idempotency key")
        String key;

        @Option(names = {"-t", "--topic"}, required = true, paramLabel = "<topic>",
                description = "The topic the key's messages come from (part of the key)")
        String topic;

        IdempotencyKey idempotencyKey() {
            try {
                return new IdempotencyKey(group, topic, key);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }
    }

    /** {@code idem claims show}. */
    @Command(name = "show", description = "Show a key's claim record.")
    static final class Show extends KeyCommand {

        @Option(names = {"-o", "--output"}, paramLabel = "table|json", completionCandidates = Output.Names.class,
                description = "text (default) or json")
        Output output = Output.TABLE;

        @Override
        int execute() {
            IdempotencyKey key = idempotencyKey();
            try (Connections connections = connect()) {
                Optional<ClaimRecord> record = connections.claims().inspect(key);
                if (output == Output.JSON) {
                    Map<String, Object> json = new LinkedHashMap<>();
                    json.put("key", key.toString());
                    json.put("redisKey", connections.claims().redisKey(key));
                    json.put("record", record.map(ClaimsCommand::json).orElse(null));
                    Json.print(out(), json);
                } else {
                    out().println(key + " (Redis key " + connections.claims().redisKey(key) + ")");
                    if (record.isEmpty()) {
                        out().println("  no record: never claimed, expired, or reset");
                    } else {
                        print(out(), record.get(), "  ");
                    }
                }
                return Idem.OK;
            }
        }
    }

    /** {@code idem claims reset}. */
    @Command(name = "reset", description = "Forget a key's claim record (and, with --jdbc-url, its dead row in the "
            + "effect ledger), so that its next delivery runs once. Needs --yes.")
    static final class Reset extends KeyCommand {

        @Option(names = "--yes", description = "Do it")
        boolean yes;

        @Option(names = "--force", description = "Reset a key that is running or whose compensation is pending")
        boolean force;

        @Override
        int execute() throws Exception {
            IdempotencyKey key = idempotencyKey();
            confirm(yes, "reset forgets the claim record of " + key);
            try (Connections connections = connect()) {
                Optional<ClaimRecord> before = connections.claims().inspect(key);
                Optional<String> refusal = before.flatMap(ResetGuard::refusal);
                if (refusal.isPresent() && !force) {
                    err().println("refused: " + key + ": " + refusal.get() + "; --force to reset it anyway");
                    return Idem.SOME_FAILED;
                }
                boolean forgotten = connections.ledger().isPresent() && connections.ledger().get().forgetDeadLetter(key);
                connections.claims().reset(key);
                out().println("reset " + key + ": it was " + before.map(r -> r.state().name()).orElse("not recorded")
                        + (forgotten ? "; the ledger's dead row is forgotten too" : ""));
                if (before.filter(r -> r.state() == ClaimRecord.State.DONE).isPresent()) {
                    out().println("note: the key was DONE; a Redis-only consumer will apply its next delivery again");
                }
                if (connections.ledger().isEmpty()) {
                    out().println("note: no --jdbc-url; a guarded consumer's ledger still knows a dead key, and reports "
                            + "its next delivery as a duplicate");
                }
                return Idem.OK;
            }
        }
    }

    static void print(PrintWriter out, ClaimRecord record, String indent) {
        out.println(indent + "state         " + record.state());
        record.owner().ifPresent(o -> out.println(indent + "owner         " + o));
        out.println(indent + "attempts      " + record.attempts() + " (failures " + record.failures() + ")");
        record.lastError().ifPresent(e -> out.println(indent + "last error    " + e));
        record.deadLetterReason().ifPresent(r -> out.println(indent + "dead letter   " + r));
        record.compensation().ifPresent(c -> out.println(indent + "compensation  " + c));
        out.println(indent + "expires in    " + human(record.timeToLive()));
    }

    static Map<String, Object> json(ClaimRecord record) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("state", record.state().name());
        json.put("owner", record.owner().orElse(null));
        json.put("fence", record.fence());
        json.put("attempts", record.attempts());
        json.put("failures", record.failures());
        json.put("lastError", record.lastError().orElse(null));
        json.put("deadLetterReason", record.deadLetterReason().orElse(null));
        json.put("compensation", record.compensation().map(CompensationOutcome::text).orElse(null));
        json.put("expiresInSeconds", record.timeToLive().toSeconds());
        return json;
    }

    static String human(Duration duration) {
        long seconds = duration.toSeconds();
        if (seconds >= 86_400) {
            return seconds / 86_400 + "d " + (seconds % 86_400) / 3_600 + "h";
        }
        if (seconds >= 3_600) {
            return seconds / 3_600 + "h " + (seconds % 3_600) / 60 + "m";
        }
        return seconds / 60 + "m " + seconds % 60 + "s";
    }
}
