package dev.idem.micronaut.internal;

import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.annotation.AnnotationMetadata;
import java.lang.annotation.Annotation;
import io.micronaut.core.util.StringUtils;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** Idem's settings read from the environment; a wrong one fails start-up naming the property. */
public final class Settings {

    private final Environment environment;

    public Settings(Environment environment) {
        this.environment = environment;
    }

    /** Fails on a key under {@code prefix} that is not one of {@code known}; {@code kind} says what they are. */
    public void checkKeys(String prefix, Set<String> known, String kind) {
        for (String key : environment.getPropertyEntries(prefix)) {
            if (!known.contains(key)) {
                throw new ConfigurationException(prefix + "." + key + " is not " + kind + "; known: "
                        + known.stream().sorted().map(k -> prefix + "." + k).collect(Collectors.joining(", ")));
            }
        }
    }

    /**
     * An annotation member's text with its {@code ${...}} placeholders resolved in this environment.
     * The generated annotation metadata is shared by every application context in the JVM and
     * resolves placeholders in whichever environment configured it first, so a second context would
     * read the first one's values: the member is read as written and resolved here. A member left
     * out gives its default.
     *
     * @throws ConfigurationException naming the placeholder that cannot be resolved
     */
    public Optional<String> annotationText(AnnotationMetadata metadata, Class<? extends Annotation> annotation,
                                           String member) {
        Object raw = metadata.findAnnotation(annotation).map(v -> v.getValues().get(member)).orElse(null);
        if (raw instanceof String[] many) {
            raw = many.length == 0 ? null : many[0];
        }
        if (raw == null) {
            return metadata.stringValue(annotation, member);
        }
        return Optional.of(environment.getPlaceholderResolver().resolveRequiredPlaceholders(raw.toString()));
    }

    public String required(String property) {
        return environment.getProperty(property, String.class).filter(StringUtils::hasText)
                .orElseThrow(() -> new ConfigurationException(property + " is required but not set"));
    }

    private Optional<String> text(String property) {
        return environment.getProperty(property, String.class);
    }

    public int intSetting(String property, int fallback) {
        Optional<String> raw = text(property);
        if (raw.isEmpty()) {
            return fallback;
        }
        try {
            return Integer.parseInt(raw.get().trim());
        } catch (NumberFormatException e) {
            throw new ConfigurationException(property + " must be a whole number but was '" + raw.get() + "'");
        }
    }

    /** The property's duration, else {@code fallback} (named by {@code fallbackOrigin} when it is wrong). */
    public Duration durationSetting(String property, String fallback, String fallbackOrigin) {
        Optional<String> raw = text(property);
        String where = raw.isPresent() ? property : fallbackOrigin;
        String value = raw.orElse(fallback);
        return Durations.parse(value).orElseThrow(() -> new ConfigurationException(where
                + " must be a duration like 30s, 500ms, 2m or PT30S but was '" + value + "'"));
    }

    /** The property's duration, when it is set. */
    public Optional<Duration> optionalDuration(String property) {
        return text(property).map(value -> Durations.parse(value).orElseThrow(() -> new ConfigurationException(property
                + " must be a duration like 30s, 500ms, 2m or PT30S but was '" + value + "'")));
    }

    /** The property's whole number, when it is set. */
    public Optional<Integer> optionalInt(String property) {
        return text(property).map(value -> intSetting(property, 0));
    }

    /** Whether the property is set at all. */
    public boolean isSet(String property) {
        return text(property).isPresent();
    }

    /** The property's text, when it is set. */
    public Optional<String> optionalText(String property) {
        return text(property);
    }

    /** The property's {@code true} or {@code false}, when it is set. */
    public Optional<Boolean> optionalBoolean(String property) {
        return text(property).map(value -> switch (value.trim()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ConfigurationException(property + " must be true or false but was '" + value + "'");
        });
    }

    /** The property's decimal number, when it is set. */
    public Optional<Double> optionalDecimal(String property) {
        return text(property).map(value -> {
            try {
                return Double.parseDouble(value.trim());
            } catch (NumberFormatException e) {
                throw new ConfigurationException(property + " must be a number like 0.2 but was '" + value + "'");
            }
        });
    }
}
