package dev.idem.cli;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the command reads from the world around it: environment variables, the home folder (for the
 * profile file), who runs it where (for replay records), the clock, and whether it talks to a
 * terminal (for the progress bar). Tests pass their own. Immutable.
 *
 * @param variables environment variables
 * @param home      the user's home folder
 * @param host      this machine's name
 * @param user      the operator's user name
 * @param clock     the clock replay records are stamped with
 * @param terminal  whether output goes to an interactive terminal
 */
public record Environment(Map<String, String> variables, Path home, String host, String user, Clock clock,
                          boolean terminal) {

    /** @throws NullPointerException if a part is null */
    public Environment {
        variables = Map.copyOf(variables);
        Objects.requireNonNull(home, "home");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(clock, "clock");
    }

    /**
     * The process's own environment. Its clock is in this machine's time zone, in which times without
     * a zone ({@code --from 2026-11-22T03:00}) are read.
     */
    public static Environment system() {
        return new Environment(System.getenv(), Path.of(System.getProperty("user.home")), hostName(),
                System.getProperty("user.name", "unknown"), Clock.systemDefaultZone(), System.console() != null);
    }

    /** An environment variable, or null. */
    public @Nullable String variable(String name) {
        String value = variables.get(name);
        return value == null || value.isBlank() ? null : value;
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            String fromEnv = System.getenv("HOSTNAME");
            return fromEnv == null ? "unknown" : fromEnv;
        }
    }
}
