package dev.idem.cli.commands;

import dev.idem.cli.CliException;
import dev.idem.cli.Idem;
import dev.idem.cli.ops.Connections;
import dev.idem.core.outbox.JdbcOutbox;
import dev.idem.core.outbox.OutboxOperations;
import dev.idem.core.outbox.OutboxStatus;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code idem outbox}: what waits in the outbox, its dead rows, and sending them again. */
@Command(name = "outbox", description = "Show the outbox's backlog and rows, send dead rows again, purge.",
        subcommands = {OutboxCommand.Status.class, OutboxCommand.Show.class, OutboxCommand.Retry.class,
                OutboxCommand.Purge.class})
public final class OutboxCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is missing: status, show, retry or purge");
    }

    /** A command on the outbox's table. */
    abstract static class OnOutbox extends Subcommand {

        @Override
        final int execute() {
            try (Connections connections = connect()) {
                return run(connections.outbox());
            } catch (SQLException e) {
                throw new CliException("the outbox's database failed: " + e.getMessage(), e);
            }
        }

        abstract int run(JdbcOutbox outbox) throws SQLException;
    }

    /** {@code idem outbox status}. */
    @Command(name = "status", description = "Per destination: rows not yet published, dead rows, the oldest unsent.")
    static final class Status extends OnOutbox {

        @Option(names = {"-o", "--output"}, paramLabel = "table|json", completionCandidates = Output.Names.class,
                description = "table (default) or json")
        Output output = Output.TABLE;

        @Override
        int run(JdbcOutbox outbox) throws SQLException {
            OutboxStatus status = outbox.status();
            if (output == Output.JSON) {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("backlog", status.backlog());
                json.put("dead", status.dead());
                json.put("oldestUnsentSeconds", status.oldestUnsentAge().map(Duration::toSeconds).orElse(null));
                Map<String, Object> destinations = new LinkedHashMap<>();
                status.destinations().forEach((name, d) -> {
                    Map<String, @Nullable Object> one = new LinkedHashMap<>();
                    one.put("unsent", d.unsent());
                    one.put("dead", d.dead());
                    one.put("oldestUnsent", text(d.oldestUnsent()));
                    destinations.put(name, one);
                });
                json.put("destinations", destinations);
                Json.print(out(), json);
            } else {
                Table table = new Table("DESTINATION", "UNSENT", "DEAD", "OLDEST UNSENT");
                status.destinations().forEach((name, d) -> table.row(name, d.unsent(), d.dead(), d.oldestUnsent()));
                table.print(out());
                err().println(status.backlog() + " unsent, " + status.dead() + " dead in " + outbox.table()
                        + status.oldestUnsentAge().map(age -> "; the oldest unsent waits for " + age.toSeconds() + " s")
                        .orElse(""));
            }
            return Idem.OK;
        }
    }

    /** {@code idem outbox show}. */
    @Command(name = "show", description = "List the outbox's rows (without their values), oldest first.")
    static final class Show extends OnOutbox {

        @Option(names = "--state", paramLabel = "new|dead|sent", description = "Only rows in this state")
        @Nullable String state;

        @Option(names = "--destination", paramLabel = "<topic>", description = "Only rows for this topic")
        @Nullable String destination;

        @Option(names = "--limit", paramLabel = "<n>", description = "At most n rows; default 100")
        int limit = 100;

        @Option(names = {"-o", "--output"}, paramLabel = "table|json", completionCandidates = Output.Names.class,
                description = "table (default) or json")
        Output output = Output.TABLE;

        @Override
        int run(JdbcOutbox outbox) throws SQLException {
            if (limit < 1) {
                throw new ParameterException(spec.commandLine(), "--limit must be at least 1 but was " + limit);
            }
            var rows = outbox.operations().rows(state(spec, state), destination, limit);
            if (output == Output.JSON) {
                Json.print(out(), rows.stream().map(r -> {
                    Map<String, @Nullable Object> json = new LinkedHashMap<>();
                    json.put("position", r.position());
                    json.put("id", r.id());
                    json.put("destination", r.destination());
                    json.put("key", r.key());
                    json.put("state", r.state().name().toLowerCase(Locale.ROOT));
                    json.put("attempts", r.attempts());
                    json.put("createdAt", r.createdAt().toString());
                    json.put("sentAt", text(r.sentAt()));
                    json.put("lastError", r.lastError());
                    json.put("valueBytes", r.valueBytes());
                    return json;
                }).toList());
            } else {
                Table table = new Table("POSITION", "ID", "DESTINATION", "KEY", "STATE", "ATTEMPTS", "WRITTEN AT",
                        "LAST ERROR");
                rows.forEach(r -> table.row(r.position(), r.id(), r.destination(), r.key(),
                        r.state().name().toLowerCase(Locale.ROOT), r.attempts(), r.createdAt(), r.lastError()));
                table.print(out());
                err().println(rows.size() + " row(s) of " + outbox.table());
            }
            return Idem.OK;
        }
    }

    /** {@code idem outbox retry}. */
    @Command(name = "retry", description = "Send dead rows back to the relay (after the cause is fixed: the topic "
            + "created, the limit raised).")
    static final class Retry extends OnOutbox {

        @Option(names = "--destination", paramLabel = "<topic>", description = "Only dead rows for this topic")
        @Nullable String destination;

        @Option(names = "--yes", description = "Do it (nothing changes without it)")
        boolean yes;

        @Override
        int run(JdbcOutbox outbox) throws SQLException {
            confirm(yes, "send the dead rows" + (destination == null ? "" : " of " + destination) + " again");
            int rows = outbox.operations().retryDead(destination);
            out().println(rows + " dead row(s) sent back to the relay");
            return Idem.OK;
        }
    }

    /** {@code idem outbox purge}. */
    @Command(name = "purge", description = "Delete dead rows, or rows kept after they were published.")
    static final class Purge extends OnOutbox {

        @Option(names = "--state", required = true, paramLabel = "dead|sent", description = "Which rows")
        String state;

        @Option(names = "--older-than", paramLabel = "<duration>",
                description = "Only rows older than this: 90s, 30m, 2h, 7d; default every one")
        @Nullable String olderThan;

        @Option(names = "--yes", description = "Do it (nothing changes without it)")
        boolean yes;

        @Override
        int run(JdbcOutbox outbox) throws SQLException {
            OutboxOperations.State which = state(spec, state);
            if (which == null || which == OutboxOperations.State.NEW) {
                throw new ParameterException(spec.commandLine(), "--state must be dead or sent: rows not yet "
                        + "published are never purged");
            }
            Duration age = Duration.ZERO;
            if (olderThan != null) {
                Duration typed = Idem.age(olderThan);
                if (typed == null) {
                    throw new ParameterException(spec.commandLine(), "--older-than must be an age like 90s, 30m, "
                            + "2h or 7d but was '" + olderThan + "'");
                }
                age = typed;
            }
            confirm(yes, "delete the " + state + " rows" + (olderThan == null ? "" : " older than " + olderThan));
            long rows = outbox.operations().purge(which, age, 1000);
            out().println(rows + " " + state + " row(s) deleted");
            return Idem.OK;
        }
    }

    static OutboxOperations.@Nullable State state(CommandSpec spec, @Nullable String name) {
        if (name == null) {
            return null;
        }
        try {
            return OutboxOperations.State.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--state must be new, dead or sent but was '" + name + "'");
        }
    }

    private static @Nullable String text(@Nullable Object value) {
        return value == null ? null : value.toString();
    }
}
