package dev.idem.cli.commands;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;

/** How results are printed: {@code --output table} (default) or {@code json}. */
enum Output {
    TABLE, JSON;

    /** The names an operator types ({@code table}, {@code json}), for shell completion. */
    static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(values()).map(o -> o.name().toLowerCase(Locale.ROOT)).iterator();
        }
    }
}
