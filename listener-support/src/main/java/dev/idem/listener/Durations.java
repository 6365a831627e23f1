package dev.idem.listener;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Durations as users write them in properties: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d}, or ISO-8601. */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");

    private Durations() {
    }

    /** The duration, or empty when the text is not one, or not positive. */
    public static Optional<Duration> parse(@Nullable String text) {
        if (text == null) {
            return Optional.empty();
        }
        String value = text.trim();
        Matcher m = SHORT.matcher(value);
        Duration duration;
        try {
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                duration = switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            } else {
                duration = Duration.parse(value);
            }
        } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
            return Optional.empty();
        }
        return duration.isNegative() || duration.isZero() ? Optional.empty() : Optional.of(duration);
    }
}
