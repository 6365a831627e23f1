package dev.idem.benchmarks.soak;

import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The soak's report in markdown: the promises, the figures, the violating ids' histories and the timeline. */
final class SoakReport {

    /** Everything measured in one run. */
    record Figures(Map<String, Integer> sent, Tally tally, Verdict verdict, double trafficSeconds,
                   double drainSeconds, boolean drained, long sendFailures, int processesStarted, List<Integer> dead,
                   int kills, int pauses, double[] pauseRange, int redisFaults, String redisFault, int losses,
                   Map<String, List<String>> histories) {
    }

    private final SoakSettings settings;
    private final String run;
    private final Path dir;
    private final Timeline timeline;

    SoakReport(SoakSettings settings, String run, Path dir, Timeline timeline) {
        this.settings = settings;
        this.run = run;
        this.dir = dir;
        this.timeline = timeline;
    }

    String markdown(Figures f, boolean kept) {
        Verdict v = f.verdict();
        Tally t = f.tally();
        StringBuilder out = new StringBuilder();
        out.append("# Idem soak on ").append(switch (settings.broker()) {
                    case "kafka" -> "Kafka";
                    case "share" -> "a Kafka share group";
                    default -> "RocketMQ";
                })
                .append(settings.redis().equals("single") ? "" : ", Redis " + settings.redis()).append("\n\n");
        out.append(String.format(Locale.ROOT, "Run `%s` at %s, seed %d, on %d cores, Java %s: %d consumer processes "
                        + "of one group (concurrency %d each, lease %d ms), %d partitions, %s, the soak's own "
                        + "Redis (%s). **%s.**%n%n", run,
                Instant.now().truncatedTo(ChronoUnit.SECONDS), settings.seed(), Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), settings.consumers(), settings.concurrency(),
                settings.lease().toMillis(), settings.partitions(), settings.guarded()
                        ? "guarded mode (JDBC ledger on PostgreSQL)"
                        : "Redis-only mode (`DedupCheck.none()`: its promise ends where Redis loses data)",
                settings.redis().equals("single") ? "one redis-server" : settings.redis().equals("sentinel")
                        ? "a primary, a replica and three Sentinels" : "a Cluster of three masters",
                kept ? "Every promise kept" : "PROMISES BROKEN"));
        out.append("| promise | ids that broke it | kept |\n|---|---:|---|\n");
        promise(out, "lost: a good or transient id without an effect", v.lost.size());
        promise(out, settings.guarded() ? "doubled: an id with more than one effect"
                : "doubled: an id with an effect repeated without Redis losing its record between, or its "
                        + "process stopping between effect and completion", v.doubled.size());
        promise(out, "a poison id applied", v.poisonApplied.size());
        promise(out, "a poison id never compensated", v.poisonNotCompensated.size());
        promise(out, settings.guarded() ? "a poison id compensated more than once"
                : "a poison id compensated again without Redis losing its record between", v.poisonCompensatedTwice.size());
        promise(out, "a poison id without a dead letter", v.poisonWithoutLetter.size());
        promise(out, "a good or transient id dead-lettered or compensated", v.goodDeadLettered.size());
        promise(out, "a row or letter of an id never sent", v.unknown.size());
        promise(out, "messages left unacknowledged at the end (lag)", (int) v.lag);
        promise(out, "consumer processes that died on their own", f.dead().size());
        promise(out, "consumers drained within " + settings.drain().toSeconds() + " s", f.drained() ? 0 : 1);

        int copies = f.sent().values().stream().mapToInt(Integer::intValue).sum();
        long letters = t.deadLetters().values().stream().mapToInt(Integer::intValue).sum();
        long effects = t.effects().values().stream().mapToInt(Integer::intValue).sum();
        long compensations = t.compensations().values().stream().mapToInt(Integer::intValue).sum();
        int extraCopies = v.extraLetters.values().stream().mapToInt(n -> n - 1).sum();
        out.append("\n| figure | value |\n|---|---:|\n");
        row(out, "traffic and faults", String.format(Locale.ROOT, "%.0f s", f.trafficSeconds()));
        row(out, "drain after them", String.format(Locale.ROOT, "%.0f s", f.drainSeconds()));
        row(out, "ids sent (good / transient / poison)", String.format(Locale.ROOT, "%d (%d / %d / %d)",
                f.sent().size(), v.goodIds, v.transientIds, v.poisonIds));
        row(out, "messages sent (2 or 3 copies per id)", Integer.toString(copies));
        row(out, "sends the broker refused", Long.toString(f.sendFailures()));
        row(out, "deliveries (outcomes the consumers counted; a kill loses up to 0.5 s of one process's counts)",
                Long.toString(t.deliveries()));
        row(out, "outcomes", t.outcomes().entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", ")));
        row(out, "handler calls", Long.toString(t.calls()));
        row(out, "highest attempt a handler saw", Integer.toString(t.maxAttempt()));
        if (!t.beyondMax().isEmpty()) {
            // Decision 0018: a key whose record Redis lost gets one real run, even past maxAttempts.
            row(out, "ids run beyond attempt 5 (one run after Redis lost their record, decision 0018)",
                    t.beyondMax().toString());
        }
        row(out, "effects", Long.toString(effects));
        row(out, "compensations", Long.toString(compensations));
        row(out, "dead letters in " + settings.broker() + "'s dead-letter topic", Long.toString(letters));
        row(out, "poison ids with a second dead-letter copy (allowed, decision 0017)",
                String.format(Locale.ROOT, "%d (%d extra copies)", v.extraLetters.size(), extraCopies));
        row(out, "kill -9 of a consumer", Integer.toString(f.kills()));
        row(out, "SIGSTOP beyond the lease", String.format(Locale.ROOT, "%d (%.1f to %.1f s)", f.pauses(),
                f.pauseRange()[0], f.pauseRange()[1]));
        row(out, f.redisFault(), Integer.toString(f.redisFaults()));
        row(out, "losses of Redis data (a restart empty, a failover's lost writes)", Integer.toString(f.losses()));
        if (!settings.guarded()) {
            row(out, "ids applied again after Redis lost their record (Redis-only: allowed); of them, ids whose "
                            + "claim was lost under a running handler (its effect came after the loss)",
                    v.doubledAfterLoss.size() + "; " + v.doubledAfterClaimLoss.size());
            row(out, String.format(Locale.ROOT, "ids applied again after their process was killed within %.1f s of "
                            + "the effect, or paused beyond its lease before its completion, or by a process paused "
                            + "beyond its lease while its handler ran (Redis-only: allowed); longest effect-to-kill", Verdict.COMPLETION_LIMIT.toMillis() / 1e3),
                    String.format(Locale.ROOT, "%d; %d ms", v.doubledAfterStop.size(), v.longestEffectToKill.toMillis()));
            row(out, "poison ids compensated again after Redis lost their record (Redis-only: allowed)",
                    Integer.toString(v.compensatedAgainAfterLoss.size()));
        }
        row(out, "consumer processes started", Integer.toString(f.processesStarted()));
        row(out, "messages sent per second, deliveries per second (traffic and drain)", String.format(Locale.ROOT,
                "%.0f, %.0f", copies / f.trafficSeconds(), t.deliveries() / (f.trafficSeconds() + f.drainSeconds())));
        t.extra().forEach((name, value) -> row(out, name, Long.toString(value)));
        if (!v.extraLetters.isEmpty()) {
            out.append("\nPoison ids with more than one dead-letter copy: ").append(v.extraLetters).append("\n");
        }
        if (!f.histories().isEmpty()) {
            out.append("\n## Violating ids (first ").append(f.histories().size()).append(")\n\n");
            f.histories().forEach((id, lines) -> {
                out.append(String.format(Locale.ROOT, "`%s`: %d effect(s), %d compensation(s), %d dead letter(s)%n%n```%n",
                        id, t.effects().getOrDefault(id, 0), t.compensations().getOrDefault(id, 0),
                        t.deadLetters().getOrDefault(id, 0)));
                lines.forEach(line -> out.append(line).append('\n'));
                out.append("```\n\n");
            });
        }
        out.append("\n## Timeline\n\n```\n");
        timeline.events().forEach(line -> out.append(line).append('\n'));
        out.append("```\n\nConsumer logs: `benchmarks/").append(Path.of("").toAbsolutePath().relativize(dir)).append("`.\n");
        return out.toString();
    }

    private static void promise(StringBuilder out, String name, int found) {
        out.append("| ").append(name).append(" | ").append(found).append(" | ").append(found == 0 ? "yes" : "**no**")
                .append(" |\n");
    }

    private static void row(StringBuilder out, String name, String value) {
        out.append("| ").append(name).append(" | ").append(value).append(" |\n");
    }
}
