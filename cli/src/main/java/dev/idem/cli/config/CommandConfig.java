package dev.idem.cli.config;

import dev.idem.cli.CliException;
import dev.idem.cli.Environment;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * The command's settings, each from its flag, else its environment variable, else the profile file,
 * else its default. The profile file ({@code ~/.idem/profiles.properties} unless
 * {@code --profile-file} or {@code IDEM_PROFILE_FILE} names another) holds
 * {@code <profile>.<key>=value} lines; the profile is {@code --profile}, {@code IDEM_PROFILE} or
 * {@code default}. Lines {@code <profile>.kafka.<client setting>=value} pass client settings (TLS,
 * SASL) to the Kafka clients. Immutable.
 */
public final class CommandConfig {

    /** Where the profile file is unless named. */
    public static final String DEFAULT_PROFILE_FILE = ".idem/profiles.properties";
    private static final String DEFAULT_PROFILE = "default";
    private static final Map<Setting, String> DEFAULTS = Map.of(Setting.KEY_PREFIX, "idem:",
            Setting.JDBC_TABLE, "idem_effect", Setting.OUTBOX_TABLE, "idem_outbox");
    private static final String KAFKA_PASS_THROUGH = "kafka.";

    private final Map<Setting, String> values;
    private final Map<String, String> kafkaProperties;

    private CommandConfig(Map<Setting, String> values, Map<String, String> kafkaProperties) {
        this.values = values;
        this.kafkaProperties = kafkaProperties;
    }

    /**
     * Resolves every setting.
     *
     * @param flags       the values given as flags (absent ones left out)
     * @param environment environment variables and home folder
     * @param profileFile the {@code --profile-file} flag, or null
     * @param profile     the {@code --profile} flag, or null
     * @throws CliException if a named profile file or profile does not exist, or the file cannot be read
     */
    public static CommandConfig resolve(Map<Setting, String> flags, Environment environment, Path profileFile,
                                   String profile) {
        String profileName = first(profile, environment.variable("IDEM_PROFILE"));
        String fileName = environment.variable("IDEM_PROFILE_FILE");
        Path file = profileFile != null ? profileFile
                : fileName != null ? Path.of(fileName) : environment.home().resolve(DEFAULT_PROFILE_FILE);
        boolean named = profileFile != null || fileName != null || profileName != null;
        Properties properties = read(file, named);
        String name = profileName == null ? DEFAULT_PROFILE : profileName;
        String prefix = name + ".";
        if (profileName != null && properties.stringPropertyNames().stream().noneMatch(k -> k.startsWith(prefix))) {
            throw new CliException("no profile '" + name + "' in " + file);
        }
        Map<Setting, String> values = new EnumMap<>(Setting.class);
        for (Setting setting : Setting.values()) {
            String value = first(flags.get(setting), environment.variable(setting.variable()),
                    blankToNull(properties.getProperty(prefix + setting.key())), DEFAULTS.get(setting));
            if (value != null) {
                values.put(setting, value.trim());
            }
        }
        Map<String, String> kafka = new LinkedHashMap<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith(prefix + KAFKA_PASS_THROUGH)) {
                kafka.put(key.substring(prefix.length() + KAFKA_PASS_THROUGH.length()), properties.getProperty(key).trim());
            }
        }
        return new CommandConfig(values, Map.copyOf(kafka));
    }

    private static Properties read(Path file, boolean named) {
        Properties properties = new Properties();
        if (!Files.exists(file)) {
            if (named) {
                throw new CliException("profile file " + file + " does not exist");
            }
            return properties;
        }
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        } catch (IOException | IllegalArgumentException e) {
            throw new CliException("cannot read profile file " + file + ": " + e.getMessage(), e);
        }
        return properties;
    }

    private static @Nullable String first(@Nullable String... candidates) {
        for (String candidate : candidates) {
            if (candidate != null && !candidate.isBlank()) {
                return candidate;
            }
        }
        return null;
    }

    private static @Nullable String blankToNull(@Nullable String value) {
        return value == null || value.isBlank() ? null : value;
    }

    /** A setting, if set anywhere or defaulted. */
    public Optional<String> get(Setting setting) {
        return Optional.ofNullable(values.get(setting));
    }

    /**
     * A setting the command cannot do without.
     *
     * @throws CliException naming the ways to set it
     */
    public String require(Setting setting) {
        return get(setting).orElseThrow(() -> new CliException(setting.description() + " is not set: use "
                + setting.howToSet()));
    }

    /** Kafka client settings from the profile ({@code <profile>.kafka.<name>}). */
    public Map<String, String> kafkaProperties() {
        return kafkaProperties;
    }
}
