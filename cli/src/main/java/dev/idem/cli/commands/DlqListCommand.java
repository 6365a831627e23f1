package dev.idem.cli.commands;

import dev.idem.cli.Idem;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.DeadLettering;
import dev.idem.cli.letters.Letter;
import dev.idem.cli.letters.LetterGroup;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.ReplayRecord;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code idem dlq list}: the entries of a dead-letter topic, as a table or JSON. */
@Command(name = "list", description = "List the entries of a dead-letter topic (purged ones are left out).")
final class DlqListCommand extends Subcommand {

    @Mixin
    TopicOptions topic;

    @Mixin
    FilterOptions filter;

    @Option(names = "--limit", paramLabel = "<n>", description = "At most this many entries")
    int limit = Integer.MAX_VALUE;

    @Option(names = {"-o", "--output"}, paramLabel = "table|json", completionCandidates = Output.Names.class,
            description = "table (default) or json")
    Output output = Output.TABLE;

    @Option(names = "--include-purged", description = "Also list purged entries")
    boolean includePurged;

    @Option(names = "--groups", description = "One line per failure group (the failure's class and the application "
            + "frame it failed in) with its count, first and last failure; --failure-group selects one")
    boolean groups;

    @Override
    int execute() {
        try (Connections connections = connect(); DeadLetterTopic dlt = connections.topic(topic.broker)) {
            DeadLetterTopic.Scan scan = dlt.scan(topic.topic, filter.filter(dlt));
            Map<String, ReplayRecord> records = connections.hasRedis() ? connections.records().all(dlt.broker(), topic.topic)
                    : null;
            // A letter published twice for one dead-lettering (its publisher died before recording it) is one.
            List<DeadLettering> shown = DeadLettering.of(scan.letters().stream()
                    .filter(l -> includePurged || records == null || !purged(records, l)).toList())
                    .stream().limit(limit).toList();
            if (groups) {
                printGroups(LetterGroup.of(shown.stream().map(DeadLettering::letter).toList()));
            } else if (output == Output.JSON) {
                Json.print(out(), shown.stream().map(d -> json(d, records)).toList());
            } else {
                Table table = new Table("ENTRY", "KEY", "ORIGINAL TOPIC", "ATTEMPTS", "EXCEPTION", "GROUP", "FAILED AT",
                        "REPLAYED", "COPIES");
                shown.forEach(d -> {
                    Letter l = d.letter();
                    table.row(l.entry(), l.idempotencyKey(), l.originalTopic(), l.attempts() < 0 ? null : l.attempts(),
                            simpleName(l.exceptionClass()), l.failureGroup(), l.failedAt(), replayed(records, l),
                            d.copies() == 1 ? "" : d.copies() + " (" + String.join(", ", d.others()) + ")");
                });
                table.print(out());
            }
            int entries = shown.stream().mapToInt(DeadLettering::copies).sum();
            err().println(entries + " of " + scan.scanned() + " entries in " + topic.topic
                    + (entries == shown.size() ? "" : ", " + shown.size() + " dead-letterings (a letter published "
                    + "twice by one counts once)") + " (scanned in " + scan.millis() + " ms)"
                    + (records == null ? "; no Redis set, so replays are not shown" : ""));
            return Idem.OK;
        }
    }

    private void printGroups(List<LetterGroup> groups) {
        if (output == Output.JSON) {
            Json.print(out(), groups.stream().map(g -> {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("group", g.fingerprint());
                json.put("count", g.count());
                json.put("exception", g.exception());
                json.put("site", g.site());
                json.put("reason", g.reason());
                json.put("first", g.first() == null ? null : g.first().toString());
                json.put("last", g.last() == null ? null : g.last().toString());
                return json;
            }).toList());
            return;
        }
        Table table = new Table("GROUP", "COUNT", "EXCEPTION", "AT", "FIRST", "LAST");
        groups.forEach(g -> table.row(g.fingerprint(), g.count(), g.exception() == null || g.exception().isEmpty()
                ? g.reason() : simpleName(g.exception()), g.site(), g.first(), g.last()));
        table.print(out());
    }

    static boolean purged(Map<String, ReplayRecord> records, Letter letter) {
        ReplayRecord record = records.get(letter.entry());
        return record != null && record.describes(letter) && record.action().equals(ReplayRecord.PURGED);
    }

    static String replayed(@Nullable Map<String, ReplayRecord> records, Letter letter) {
        if (records == null) {
            return "?";
        }
        ReplayRecord record = records.get(letter.entry());
        if (record == null || !record.describes(letter)) {
            return "no";
        }
        return switch (record.action()) {
            case ReplayRecord.REPLAYED -> record.times() > 1 ? "yes (" + record.times() + "x)" : "yes";
            case ReplayRecord.PURGED -> "purged";
            default -> "no (" + record.action() + ")";
        };
    }

    private static Map<String, @Nullable Object> json(DeadLettering deadLettering,
                                                      @Nullable Map<String, ReplayRecord> records) {
        Letter letter = deadLettering.letter();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("entry", letter.entry());
        json.put("copies", deadLettering.others());
        json.put("key", letter.idempotencyKey());
        json.put("group", letter.group());
        json.put("originalTopic", letter.originalTopic());
        json.put("attempts", letter.attempts() < 0 ? null : letter.attempts());
        json.put("reason", letter.reason());
        json.put("exception", letter.exceptionClass());
        json.put("failureGroup", letter.failureGroup());
        json.put("traceId", letter.traceId());
        json.put("failedAt", letter.failedAt() == null ? null : letter.failedAt().toString());
        ReplayRecord record = records == null ? null : records.get(letter.entry());
        json.put("replayed", records == null ? null : record != null && record.describes(letter)
                && record.action().equals(ReplayRecord.REPLAYED));
        json.put("record", record != null && record.describes(letter) ? record : null);
        return json;
    }

    static @Nullable String simpleName(@Nullable String className) {
        return className == null ? null : className.substring(className.lastIndexOf('.') + 1);
    }
}
