package dev.idem.cli.commands;

/** How results are printed: {@code --output table} (default) or {@code json}. */
enum Output {
    TABLE, JSON
}
