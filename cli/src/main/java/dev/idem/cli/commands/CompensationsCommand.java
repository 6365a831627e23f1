package dev.idem.cli.commands;

import dev.idem.cli.Idem;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.Letter;
import dev.idem.cli.letters.LetterFilter;
import dev.idem.cli.ops.Broker;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.Replay;
import dev.idem.cli.ops.ReplayRecord;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ClaimAdmin.KeyRecord;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code idem compensations}: compensations that did not finish. */
@Command(name = "compensations", description = "Compensations that did not finish, and running them once.",
        subcommands = CompensationsCommand.Pending.class)
public final class CompensationsCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is missing: pending");
    }

    /**
     * {@code idem compensations pending [--run]}. Running one resends its dead letter's original
     * message: the consumer finds the key dead with its compensation pending and its lease over, takes
     * the compensation over and runs the application's hook once (docs/decisions/0025). A key whose
     * compensation finished meanwhile is acknowledged as dead, without running anything.
     */
    @Command(name = "pending", description = {"List dead keys whose compensation has no outcome yet (running, or cut "
            + "off by a crash).", "With --run (and --broker, --topic, --yes) resend each one's dead letter: the "
            + "consumer takes the compensation over once its lease has ended and runs the application's hook once."})
    static final class Pending extends Subcommand {

        @Option(names = {"-g", "--group"}, required = true, paramLabel = "<group>", description = "Consumer group")
        String group;

        @Option(names = "--limit", paramLabel = "<n>", description = "At most n keys; default 1000")
        int limit = 1_000;

        @Option(names = {"-o", "--output"}, paramLabel = "table|json", completionCandidates = Output.Names.class,
                description = "table (default) or json")
        Output output = Output.TABLE;

        @Option(names = "--run", description = "Have the consumer run them: resend their dead letters")
        boolean run;

        @Option(names = {"-b", "--broker"}, paramLabel = "kafka|rocketmq", completionCandidates = Broker.Names.class,
                description = "With --run: the broker: ${COMPLETION-CANDIDATES}")
        Broker broker;

        @Option(names = {"-t", "--topic"}, paramLabel = "<topic>", description = "With --run: the dead-letter topic")
        String topic;

        @Option(names = "--yes", description = "With --run: send")
        boolean yes;

        @Override
        int execute() {
            if (run && (broker == null || topic == null)) {
                throw new ParameterException(spec.commandLine(), "--run needs --broker and --topic (the dead-letter topic)");
            }
            try (Connections connections = connect()) {
                List<KeyRecord> pending = connections.claims().pendingCompensations(group, limit);
                if (!run) {
                    print(pending);
                    return Idem.OK;
                }
                if (pending.isEmpty()) {
                    out().println("no pending compensation in group " + group);
                    return Idem.OK;
                }
                confirm(yes, "--run resends the dead letters of " + pending.size() + " key(s)");
                return run(connections, pending);
            }
        }

        private void print(List<KeyRecord> pending) {
            if (output == Output.JSON) {
                Json.print(out(), pending.stream().map(k -> {
                    Map<String, Object> json = new LinkedHashMap<>();
                    json.put("group", k.key().group());
                    json.put("topic", k.key().topic());
                    json.put("key", k.key().value());
                    json.put("record", ClaimsCommand.json(k.record()));
                    return json;
                }).toList());
                return;
            }
            Table table = new Table("TOPIC", "KEY", "ATTEMPTS", "DEAD LETTER", "HELD BY");
            pending.forEach(k -> table.row(k.key().topic(), k.key().value(), k.record().attempts(),
                    k.record().deadLetterReason().orElse(null), k.record().owner().orElse(null)));
            table.print(out());
            out().println(pending.size() + " pending compensation(s) in group " + group);
        }

        private int run(Connections connections, List<KeyRecord> pending) {
            try (DeadLetterTopic dlt = connections.topic(broker)) {
                Set<String> keys = pending.stream().map(k -> k.key().value()).collect(Collectors.toSet());
                DeadLetterTopic.Scan scan = dlt.scan(topic, new LetterFilter(Set.of(), keys, group, null, null, null, null, null));
                Replay replay = new Replay(connections, dlt, topic, environment());
                Table table = new Table("TOPIC", "KEY", "OUTCOME", "DETAIL");
                int sent = 0;
                for (KeyRecord keyRecord : pending) {
                    Optional<Letter> letter = newest(scan.letters(), keyRecord.key());
                    String outcome;
                    String detail;
                    if (letter.isEmpty()) {
                        outcome = "failed";
                        detail = "no dead letter for this key in " + topic;
                    } else {
                        try {
                            detail = dlt.resend(letter.get()).join();
                            outcome = "sent";
                            sent++;
                            connections.records().put(dlt.broker(), topic, letter.get().entry(),
                                    replay.record(ReplayRecord.COMPENSATION, letter.get(), detail, 0));
                        } catch (RuntimeException e) {
                            outcome = "failed";
                            detail = "not acknowledged: " + e.getMessage();
                        }
                    }
                    table.row(keyRecord.key().topic(), keyRecord.key().value(), outcome, detail);
                }
                table.print(out());
                out().println("sent " + sent + " of " + pending.size() + "; the consumer runs each compensation once its "
                        + "lease has ended");
                return sent == pending.size() ? Idem.OK : Idem.SOME_FAILED;
            }
        }

        /** The latest dead letter of {@code key} (a key dead-lettered twice has two). */
        private static Optional<Letter> newest(List<Letter> letters, IdempotencyKey key) {
            return letters.stream().filter(l -> key.equals(l.claimKey().orElse(null)))
                    .max(Comparator.comparing(l -> l.failedAt() == null ? java.time.Instant.MIN : l.failedAt()));
        }
    }
}
