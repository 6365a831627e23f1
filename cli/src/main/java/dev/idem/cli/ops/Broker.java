package dev.idem.cli.ops;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;

/** The brokers whose dead-letter topics the command reads. */
public enum Broker {
    KAFKA, ROCKETMQ;

    /** The names an operator types ({@code kafka}, {@code rocketmq}), for help and shell completion. */
    public static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(values()).map(b -> b.name().toLowerCase(Locale.ROOT)).iterator();
        }
    }
}
