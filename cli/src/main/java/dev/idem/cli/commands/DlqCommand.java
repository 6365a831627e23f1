package dev.idem.cli.commands;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code idem dlq}: the dead-letter topics. */
@Command(name = "dlq", description = "List, show, replay and purge the entries of a dead-letter topic.",
        subcommands = {DlqListCommand.class, DlqShowCommand.class, DlqReplayCommand.class, DlqPurgeCommand.class})
public final class DlqCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is missing: list, show, replay or purge");
    }
}
