package dev.idem.cli.commands;

import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.Letter;
import dev.idem.cli.letters.LetterFilter;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.ReplayRecord;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The entries a changing command (replay, purge) acts on: those the filter accepts, purged ones
 * left out, at most {@code limit}; with their replay records. A changing command needs a filter or
 * {@code --all}. Immutable.
 *
 * @param letters the entries, in position order
 * @param records the topic's replay records, by entry
 * @param scan    the scan they came from
 */
record Selection(List<Letter> letters, Map<String, ReplayRecord> records, DeadLetterTopic.Scan scan) {

    static Selection of(CommandSpec spec, Connections connections, DeadLetterTopic dlt, String topic,
                        FilterOptions options, boolean all, int limit) {
        LetterFilter filter = options.filter(dlt);
        if (filter.isEmpty() && !all) {
            throw new ParameterException(spec.commandLine(), "say which entries: --entry, --key, --group, "
                    + "--original-topic, --exception, --from/--to, or --all");
        }
        DeadLetterTopic.Scan scan = dlt.scan(topic, filter);
        Map<String, ReplayRecord> records = connections.records().all(dlt.broker(), topic);
        List<Letter> letters = scan.letters().stream()
                .filter(l -> previous(records, l).filter(r -> r.action().equals(ReplayRecord.PURGED)).isEmpty())
                .limit(limit).toList();
        return new Selection(letters, records, scan);
    }

    /** The record of {@code letter}, if it describes it. */
    static Optional<ReplayRecord> previous(Map<String, ReplayRecord> records, Letter letter) {
        return Optional.ofNullable(records.get(letter.entry())).filter(r -> r.describes(letter));
    }

    Optional<ReplayRecord> previous(Letter letter) {
        return previous(records, letter);
    }
}
