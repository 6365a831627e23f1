package dev.idem.cli.commands;

import dev.idem.cli.letters.DeadLetterTopic;
import dev.idem.cli.letters.LetterFilter;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Option;

/** Which dead letters: entries, keys, group, original topic, exception class, failure group, time range. */
final class FilterOptions {

    @Option(names = "--entry", split = ",", paramLabel = "<entry>",
            description = "Entries by position: <partition>:<offset> (Kafka), <broker>:<queue>:<offset> (RocketMQ)")
    List<String> entries;

    @Option(names = "--key", split = ",", paramLabel = "<key>", description = "Idempotency keys")
    List<String> keys;

    @Option(names = "--group", paramLabel = "<group>", description = "Consumer group that dead-lettered them")
    String group;

    @Option(names = "--original-topic", paramLabel = "<topic>", description = "Topic they came from")
    String originalTopic;

    @Option(names = "--exception", paramLabel = "<class>",
            description = "Class of the last failure, full or simple name (IllegalStateException)")
    String exception;

    @Option(names = "--failure-group", paramLabel = "<fingerprint>",
            description = "Failure group, as 'dlq list --groups' shows it: the failure's class and the application frame it failed in")
    String failure;

    @Option(names = "--from", paramLabel = "<time>",
            description = "Failed at or after: 2026-11-22T03:00:00Z, 2026-11-22T03:00 (local), 2026-11-22, or an age (30m, 2h, 7d)")
    Instant from;

    @Option(names = "--to", paramLabel = "<time>", description = "Failed before (same forms as --from)")
    Instant to;

    /** The filter, with entries checked against the broker's form. */
    LetterFilter filter(DeadLetterTopic topic) {
        Set<String> checked = new LinkedHashSet<>();
        if (entries != null) {
            entries.forEach(e -> checked.add(topic.entry(e.trim())));
        }
        return new LetterFilter(checked, keys == null ? Set.of() : Set.copyOf(keys), group, originalTopic, exception,
                from, to, failure);
    }
}
