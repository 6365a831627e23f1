package dev.idem.cli.commands;

import picocli.CommandLine.Option;

/**
 * The options of a command that changes entries of a dead-letter topic (replay, purge): which
 * entries beyond the filter, how many, and whether to show or to do it.
 */
final class ChangeOptions {

    @Option(names = "--all", description = "Every entry (no other filter needed)")
    boolean all;

    @Option(names = "--dry-run", description = "Show what would be done; change nothing")
    boolean dryRun;

    @Option(names = "--yes", description = "Do it (nothing changes without it)")
    boolean yes;

    @Option(names = "--limit", paramLabel = "<n>", description = "At most n entries")
    int limit = Integer.MAX_VALUE;
}
