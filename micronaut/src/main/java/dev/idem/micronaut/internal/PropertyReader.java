package dev.idem.micronaut.internal;

import dev.idem.listener.Durations;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.core.annotation.AnnotationMetadata;
import io.micronaut.core.util.StringUtils;
import java.lang.annotation.Annotation;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** Reads Idem's properties and annotation members from Micronaut's environment; a wrong one fails start-up naming it. */
public final class PropertyReader {

    private final Environment environment;

    public PropertyReader(Environment environment) {
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

    /** The property's duration, else {@code fallback} (named by {@code fallbackOrigin} when it is wrong). */
    public Duration durationSetting(String property, String fallback, String fallbackOrigin) {
        Optional<String> raw = text(property);
        String where = raw.isPresent() ? property : fallbackOrigin;
        String value = raw.orElse(fallback);
        return Durations.parse(value).orElseThrow(() -> new ConfigurationException(where
                + " must be a duration like 30s, 500ms, 2m or PT30S but was '" + value + "'"));
    }

    /** Whether the property is set at all. */
    public boolean isSet(String property) {
        return text(property).isPresent();
    }
}
