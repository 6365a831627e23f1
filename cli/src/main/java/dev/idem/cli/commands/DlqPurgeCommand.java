package dev.idem.cli.commands;

import dev.idem.cli.Idem;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.Letter;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.Replay;
import dev.idem.cli.ops.ReplayRecord;
import dev.idem.cli.ops.ReplayRecords;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code idem dlq purge}: marks entries as dealt with. Neither broker deletes one message (Kafka only
 * truncates a partition's beginning, RocketMQ only expires whole files), so a purged entry stays on
 * the topic until its retention ends, but is left out of listings and replays (docs/decisions/0025).
 */
@Command(name = "purge", description = {"Mark entries as dealt with: they are left out of list (unless "
        + "--include-purged) and replay. The messages stay on the topic until its retention removes them. Needs --yes."})
final class DlqPurgeCommand extends Subcommand {

    @Mixin
    TopicOptions topic;

    @Mixin
    FilterOptions filter;

    @Mixin
    ChangeOptions change;

    @Override
    int execute() {
        try (Connections connections = connect(); DeadLetterTopic dlt = connections.topic(topic.broker)) {
            Selection selection = Selection.of(spec, connections, dlt, topic.topic, filter, change.all, change.limit);
            Table table = new Table("ENTRY", "KEY", "ORIGINAL TOPIC", "FAILED AT");
            selection.letters().forEach(l -> table.row(l.entry(), l.idempotencyKey(), l.originalTopic(), l.failedAt()));
            int count = selection.letters().size();
            if (count == 0) {
                out().println("no entry of " + topic.topic + " matches (" + selection.scan().scanned()
                        + " scanned; purged entries are left out)");
                return Idem.OK;
            }
            if (change.dryRun) {
                table.print(out());
                out().println("dry run: " + entries(count) + " would be purged; nothing was changed");
                return Idem.OK;
            }
            confirm(change.yes, "purge marks " + entries(count) + " of " + topic.topic + " as dealt with");
            Replay replay = new Replay(connections, dlt, topic.topic, environment());
            ReplayRecords records = connections.records();
            for (Letter letter : selection.letters()) {
                records.put(dlt.broker(), topic.topic, letter.entry(), replay.record(ReplayRecord.PURGED, letter, null, 0));
            }
            table.print(out());
            out().println("purged " + entries(count) + " of " + topic.topic
                    + "; they stay on the topic until its retention removes them");
            return Idem.OK;
        }
    }

    private static String entries(int count) {
        return count + (count == 1 ? " entry" : " entries");
    }
}
