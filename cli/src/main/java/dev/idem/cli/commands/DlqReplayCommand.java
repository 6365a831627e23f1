package dev.idem.cli.commands;

import dev.idem.cli.Idem;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.Pacer;
import dev.idem.cli.ops.Progress;
import dev.idem.cli.ops.Replay;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code idem dlq replay}: sends dead letters' original messages again, once each. */
@Command(name = "replay", description = {
        "Send the original messages of dead letters to their original topics, so that each runs once more.",
        "A key still dead is reset first (with --jdbc-url also its dead row in the effect ledger); a key applied "
                + "since is not, and the consumer reports the message as a duplicate. Each replay is recorded; "
                + "an entry replayed before is refused unless --force. Sending needs --yes.",
        "Exit status: 0 when every entry was sent, or refused only because it was replayed before or another "
                + "entry of its key was sent; 1 when one failed or was refused for another reason; 2 on an error."})
final class DlqReplayCommand extends Subcommand {

    @Mixin
    TopicOptions topic;

    @Mixin
    FilterOptions filter;

    @Mixin
    ChangeOptions change;

    @Option(names = "--force", description = "Send entries replayed before, and keys whose compensation is pending")
    boolean force;

    @Option(names = "--rate", paramLabel = "<n>", description = "At most n messages a second")
    double rate;

    @Override
    int execute() {
        try (Connections connections = connect(); DeadLetterTopic dlt = connections.topic(topic.broker)) {
            Selection selection = Selection.of(spec, connections, dlt, topic.topic, filter, change.all, change.limit);
            if (selection.letters().isEmpty()) {
                out().println("no entry of " + topic.topic + " matches (" + selection.scan().scanned()
                        + " scanned; purged entries are left out)");
                return Idem.OK;
            }
            Replay replay = new Replay(connections, dlt, topic.topic, environment());
            List<Replay.Plan> plans = Replay.oncePerKey(selection.letters().stream()
                    .map(l -> replay.plan(l, selection.previous(l), force)).toList());
            long sending = plans.stream().filter(Replay.Plan::send).count();
            if (change.dryRun) {
                Table table = new Table("ENTRY", "KEY", "ORIGINAL TOPIC", "WOULD", "WHY");
                plans.forEach(p -> table.row(p.letter().entry(), p.letter().idempotencyKey(), p.letter().originalTopic(),
                        p.send() ? "send" : "refuse", p.note()));
                table.print(out());
                out().println("dry run: " + sending + " would be sent, " + (plans.size() - sending)
                        + " refused; nothing was sent");
                return Idem.OK;
            }
            confirm(change.yes, "replay sends " + sending + " message(s) to their original topics (--dry-run shows them)");
            if (connections.ledger().isEmpty()) {
                err().println("note: no --jdbc-url: a guarded consumer's ledger still remembers dead keys and will "
                        + "report their replays as duplicates");
            }
            // Each message's line as its outcome is known: a run cut short has printed what it did.
            Table table = new Table("ENTRY", "KEY", "OUTCOME", "DETAIL");
            // "refused" is the widest outcome; details go last, where no width is needed.
            plans.forEach(p -> table.expect(p.letter().entry(), p.letter().idempotencyKey(), "refused", ""));
            table.printHeader(out());
            List<Replay.Result> results = send(replay, plans, table);
            long sent = results.stream().filter(Replay.Result::sent).count();
            long refused = results.stream().filter(r -> r.outcome().equals("refused")).count();
            long failed = results.size() - sent - refused;
            out().println("sent " + sent + ", refused " + refused + ", failed " + failed);
            // Refusals with nothing left to do (replayed before, or another entry of the key sent) are
            // not failures: a re-run of a finished replay exits 0.
            boolean refusedForCause = plans.stream().anyMatch(p -> !p.send() && !p.done());
            return failed == 0 && !refusedForCause ? Idem.OK : Idem.SOME_FAILED;
        }
    }

    private List<Replay.Result> send(Replay replay, List<Replay.Plan> plans, Table table) {
        Pacer pacer = new Pacer(rate);
        Progress progress = new Progress(err(), plans.size(), environment().terminal());
        List<CompletableFuture<Replay.Result>> pending = new ArrayList<>();
        for (Replay.Plan plan : plans) {
            if (plan.send()) {
                pacer.await();
            }
            pending.add(replay.execute(plan).whenComplete((result, failure) -> {
                if (result != null) {
                    progress.above(() -> table.printRow(out(), result.letter().entry(), result.letter().idempotencyKey(),
                            result.outcome(), result.detail()));
                }
                progress.step(result != null && result.sent());
            }));
        }
        List<Replay.Result> results = pending.stream().map(CompletableFuture::join).toList();
        progress.finish();
        return results;
    }
}
