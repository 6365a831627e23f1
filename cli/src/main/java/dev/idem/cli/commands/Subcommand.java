package dev.idem.cli.commands;

import dev.idem.cli.CliException;
import dev.idem.cli.Environment;
import dev.idem.cli.IdemCommand;
import dev.idem.cli.ops.Connections;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** What every leaf command has: its output, the environment, and connections from the settings. */
abstract class Subcommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    final IdemCommand root() {
        return (IdemCommand) spec.root().userObject();
    }

    final Environment environment() {
        return root().environment();
    }

    final PrintWriter out() {
        return spec.commandLine().getOut();
    }

    final PrintWriter err() {
        return spec.commandLine().getErr();
    }

    final Connections connect() {
        return new Connections(root().settings());
    }

    /** Refuses to change anything without {@code --yes}. */
    static void confirm(boolean yes, String what) {
        if (!yes) {
            throw new CliException(what + ": add --yes to do it" );
        }
    }

    @Override
    public final Integer call() throws Exception {
        try {
            return execute();
        } finally {
            out().flush();
            err().flush();
        }
    }

    /** Runs the command; returns its exit code. */
    abstract int execute() throws Exception;
}
