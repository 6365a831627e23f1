package dev.idem.cli;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine;

/**
 * The entry point: {@code main} for the launcher, {@link #run} for tests (in-process, with their own
 * environment and output). Errors are one line on the error stream with exit code 2; stack traces
 * only with {@code --verbose}.
 */
public final class Idem {

    /** Everything went as asked. */
    public static final int OK = 0;
    /** Some messages failed or were refused. */
    public static final int SOME_FAILED = 1;
    /** Bad usage, bad input, or a broker or Redis that cannot be reached. */
    public static final int ERROR = 2;

    private Idem() {
    }

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        quietLogging(hasVerbose(args));
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int code = run(Environment.system(), out, err, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs the command line in {@code environment}, printing to {@code out} and {@code err}. */
    public static int run(Environment environment, PrintWriter out, PrintWriter err, String... args) {
        return commandLine(environment, out, err, hasVerbose(args)).execute(args);
    }

    /** The command line, ready to execute; {@code verbose} adds stack traces to errors. */
    public static CommandLine commandLine(Environment environment, PrintWriter out, PrintWriter err, boolean verbose) {
        CommandLine commandLine = new CommandLine(new IdemCommand(environment));
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.setCaseInsensitiveEnumValuesAllowed(true);
        commandLine.registerConverter(Instant.class, text -> time(text, environment.clock()));
        commandLine.setParameterExceptionHandler((e, args) -> {
            CommandLine failed = e.getCommandLine();
            err.println("idem: " + e.getMessage() + " (see '" + failed.getCommandSpec().qualifiedName() + " --help')");
            if (verbose) {
                e.printStackTrace(err);
            }
            err.flush();
            return ERROR;
        });
        commandLine.setExecutionExceptionHandler((e, failed, parseResult) -> {
            err.println("idem: " + message(e));
            if (verbose) {
                e.printStackTrace(err);
            }
            err.flush();
            return ERROR;
        });
        commandLine.setExitCodeExceptionMapper(e -> ERROR);
        return commandLine;
    }

    private static @Nullable String message(Exception e) {
        if (e instanceof CliException) {
            return e.getMessage();
        }
        String detail = e.getMessage() == null ? "" : ": " + e.getMessage();
        return e.getClass().getSimpleName() + detail;
    }

    private static boolean hasVerbose(String[] args) {
        for (String arg : args) {
            if (arg.equals("--verbose")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The clients' logs (Kafka, Redisson, RocketMQ) go to slf4j-simple on stderr: errors only, and
     * warnings with {@code --verbose}. Results are printed by the commands themselves.
     */
    private static void quietLogging(boolean verbose) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "warn" : "error");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.setProperty("rocketmq.log.level", verbose ? "warn" : "error");
    }

    private static final Pattern AGE = Pattern.compile("(\\d+)([smhd])");

    /** An age as an operator types it ({@code 90s}, {@code 30m}, {@code 2h}, {@code 7d}), or null when it is not one. */
    public static @Nullable Duration age(String text) {
        Matcher age = AGE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!age.matches()) {
            return null;
        }
        long amount = Long.parseLong(age.group(1));
        return switch (age.group(2)) {
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }

    /**
     * A time as an operator types it: {@code 2026-11-22T03:00:00Z}, {@code 2026-11-22T03:00} or
     * {@code 2026-11-22} (this machine's time zone), or an age: {@code 90s}, {@code 30m}, {@code 2h},
     * {@code 7d} ago.
     */
    static Instant time(String text, Clock clock) {
        String value = text.trim();
        Duration duration = age(value);
        if (duration != null) {
            return clock.instant().minus(duration);
        }
        ZoneId zone = clock.getZone();
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException notInstant) {
            try {
                return LocalDateTime.parse(value).atZone(zone).toInstant();
            } catch (DateTimeParseException notLocal) {
                try {
                    return LocalDate.parse(value).atStartOfDay(zone).toInstant();
                } catch (DateTimeParseException notDate) {
                    throw new CommandLine.TypeConversionException("'" + text + "' is not a time: use 2026-11-22T03:00:00Z, "
                            + "2026-11-22T03:00, 2026-11-22 or an age such as 30m, 2h, 7d");
                }
            }
        }
    }

    /** The version from the jar's manifest. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Idem.class.getPackage().getImplementationVersion();
            return new String[] {"idem " + (version == null ? "(development build)" : version)};
        }
    }
}
