package dev.idem.cli.commands;

import dev.idem.cli.CliException;
import dev.idem.cli.Idem;
import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.DeadLettering;
import dev.idem.cli.letters.Letter;
import dev.idem.cli.letters.LetterFilter;
import dev.idem.cli.letters.LetterGroup;
import dev.idem.cli.ops.Connections;
import dev.idem.cli.ops.ReplayRecord;
import dev.idem.core.DeadLetterHeaders;
import dev.idem.core.spi.ClaimRecord;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code idem dlq show <entry>}: one entry in full, and its key's claim record; or, with
 * {@code --failure-group}, the entries of one failure group with the trace of each failing run.
 */
@Command(name = "show", description = {"Show one entry: headers, payload (pretty-printed when JSON), the key's claim "
        + "record, the trace id of the run that dead-lettered it.",
        "With --failure-group instead of an entry: the group's cause and its entries, each with its trace id."})
final class DlqShowCommand extends Subcommand {

    @Mixin
    TopicOptions topic;

    @Parameters(paramLabel = "<entry>", arity = "0..1",
            description = "<partition>:<offset> (Kafka), <broker>:<queue>:<offset> (RocketMQ)")
    String entry;

    @Option(names = "--failure-group", paramLabel = "<fingerprint>", description = "A failure group, as 'dlq list --groups' shows it")
    String failureGroup;

    @Option(names = {"-o", "--output"}, paramLabel = "table|json", completionCandidates = Output.Names.class,
            description = "text (default) or json")
    Output output = Output.TABLE;

    @Override
    int execute() {
        if ((entry == null) == (failureGroup == null)) {
            throw new ParameterException(spec.commandLine(), "say which: an <entry>, or --failure-group <fingerprint>");
        }
        try (Connections connections = connect(); DeadLetterTopic dlt = connections.topic(topic.broker)) {
            if (failureGroup != null) {
                return showGroup(connections, dlt);
            }
            Letter letter = dlt.read(topic.topic, entry)
                    .orElseThrow(() -> new CliException("no entry " + entry + " in " + topic.topic));
            Optional<ClaimRecord> claim = Optional.empty();
            Optional<ReplayRecord> record = Optional.empty();
            if (connections.hasRedis()) {
                claim = letter.claimKey().flatMap(k -> connections.claims().inspect(k));
                record = connections.records().of(dlt.broker(), topic.topic, letter);
            }
            if (output == Output.JSON) {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("entry", letter.entry());
                json.put("topic", topic.topic);
                json.put("writtenAt", letter.timestamp() == null ? null : letter.timestamp().toString());
                json.put("key", Json.readable(letter.key()));
                json.put("tags", letter.tags());
                json.put("headers", headers(letter));
                json.put("idem", letter.idem());
                json.put("payload", Json.tree(letter.value()).map(Object.class::cast).orElse(Json.readable(letter.value())));
                json.put("claim", claim.map(ClaimsCommand::json).orElse(null));
                json.put("record", record.orElse(null));
                Json.print(out(), json);
            } else {
                print(out(), letter, claim, record, connections.hasRedis());
            }
            return Idem.OK;
        }
    }

    private int showGroup(Connections connections, DeadLetterTopic dlt) {
        LetterFilter filter = new LetterFilter(Set.of(), Set.of(), null, null, null, null, null, failureGroup);
        // Purged entries are left out, as 'dlq list' leaves them out.
        Map<String, ReplayRecord> records = connections.hasRedis() ? connections.records().all(dlt.broker(), topic.topic)
                : Map.of();
        // A letter published twice for one dead-lettering counts once, as 'dlq list' counts it.
        List<Letter> letters = DeadLettering.firsts(dlt.scan(topic.topic, filter).letters().stream()
                .filter(l -> !DlqListCommand.purged(records, l)).toList());
        if (letters.isEmpty()) {
            throw new CliException("no entry of failure group " + failureGroup + " in " + topic.topic);
        }
        LetterGroup group = LetterGroup.of(letters).get(0);
        if (output == Output.JSON) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("group", group.fingerprint());
            json.put("count", group.count());
            json.put("exception", group.exception());
            json.put("site", group.site());
            json.put("reason", group.reason());
            json.put("entries", letters.stream().map(l -> {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("entry", l.entry());
                entry.put("key", l.idempotencyKey());
                entry.put("failedAt", l.failedAt() == null ? null : l.failedAt().toString());
                entry.put("traceId", l.traceId());
                return entry;
            }).toList());
            Json.print(out(), json);
            return Idem.OK;
        }
        PrintWriter out = out();
        out.println("failure group " + group.fingerprint() + " in " + topic.topic + ": " + group.count() + " entries");
        out.println("exception   " + (group.exception() == null || group.exception().isEmpty() ? "-" : group.exception()));
        out.println("at          " + (group.site() == null || group.site().isEmpty() ? "-" : group.site()));
        out.println("reason      " + group.reason());
        out.println("failed      " + group.first() + " .. " + group.last());
        out.println();
        Table table = new Table("ENTRY", "KEY", "FAILED AT", "TRACE ID");
        letters.forEach(l -> table.row(l.entry(), l.idempotencyKey(), l.failedAt(), l.traceId()));
        table.print(out);
        return Idem.OK;
    }

    private static Map<String, String> headers(Letter letter) {
        Map<String, String> headers = new LinkedHashMap<>();
        letter.headers().forEach(h -> headers.put(h.name(), Json.readable(h.value())));
        return headers;
    }

    private void print(PrintWriter out, Letter letter, Optional<ClaimRecord> claim, Optional<ReplayRecord> record,
                       boolean redis) {
        out.println("entry       " + letter.entry() + " in " + topic.topic);
        out.println("written at  " + (letter.timestamp() == null ? "-" : letter.timestamp()));
        out.println("message key " + (letter.key() == null ? "-" : Json.readable(letter.key())));
        if (letter.tags() != null) {
            out.println("tags        " + letter.tags());
        }
        out.println("trace id    " + (letter.traceId() == null ? "- (not traced)" : letter.traceId()));
        out.println("failure     " + (letter.failureGroup() == null ? "-" : letter.failureGroup()));
        out.println("replayed    " + (!redis ? "? (no Redis set)" : record.map(ReplayRecord::summary).orElse("no")));
        out.println();
        out.println("Idem headers:");
        String stackTrace = null;
        for (Map.Entry<String, String> header : letter.idem().entrySet()) {
            if (header.getKey().equals(DeadLetterHeaders.EXCEPTION_STACKTRACE)) {
                stackTrace = header.getValue();
            } else {
                out.println("  " + header.getKey() + ": " + header.getValue());
            }
        }
        out.println();
        out.println("Original headers:" + (letter.headers().isEmpty() ? " none" : ""));
        headers(letter).forEach((name, value) -> out.println("  " + name + ": " + (value == null ? "(null)" : value)));
        out.println();
        out.println("Payload:");
        out.println(Json.tree(letter.value()).map(Json::pretty)
                .orElseGet(() -> letter.value() == null ? "(none: a tombstone)" : Json.readable(letter.value())));
        out.println();
        out.println("Claim record of " + letter.claimKey().map(Object::toString).orElse("(no key in the headers)") + ":");
        if (!redis) {
            out.println("  ? (no Redis set)");
        } else if (claim.isEmpty()) {
            out.println("  none (expired, reset, or never claimed)");
        } else {
            ClaimsCommand.print(out, claim.get(), "  ");
        }
        if (stackTrace != null) {
            out.println();
            out.println("Stack trace:");
            out.println(stackTrace);
        }
    }
}
