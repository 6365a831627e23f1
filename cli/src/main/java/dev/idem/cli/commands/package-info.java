/**
 * The subcommands: {@code dlq list|show|replay|purge}, {@code claims show|reset},
 * {@code compensations pending}, each a small class over the operations in {@code dev.idem.cli.ops}.
 */
@NullMarked
package dev.idem.cli.commands;

import org.jspecify.annotations.NullMarked;
