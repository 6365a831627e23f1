package dev.idem.listener;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Durations as users write them in properties and annotations: {@code 500ms}, {@code 30s}, {@code 2m},
 * {@code 1h}, {@code 1d} (units in any case, {@code ns} and {@code us} too), a bare number of
 * milliseconds, or ISO-8601: what Spring Boot's simple and ISO styles read.
 */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d+)\\s*(ns|us|ms|s|m|h|d)?", Pattern.CASE_INSENSITIVE);

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
                String unit = m.group(2) == null ? "ms" : m.group(2).toLowerCase(java.util.Locale.ROOT);
                duration = switch (unit) {
                    case "ns" -> Duration.ofNanos(n);
                    case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1_000L));
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
