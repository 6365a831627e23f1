/**
 * The {@code idem} command line: {@link dev.idem.cli.Idem} is the entry point (and the way tests run
 * it in-process), {@link dev.idem.cli.IdemCommand} the top command with the connection options every
 * subcommand inherits. Subcommands live in {@code commands}, their configuration in {@code config},
 * dead-letter topics in {@code letters}, the operations on Redis and the ledger in {@code ops}.
 */
@NullMarked
package dev.idem.cli;

import org.jspecify.annotations.NullMarked;
