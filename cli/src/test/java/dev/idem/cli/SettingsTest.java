package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.cli.config.Setting;
import dev.idem.cli.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {

    private static Environment environment(Map<String, String> variables, Path home) {
        return new Environment(variables, home, "host", "user", Clock.systemUTC(), false);
    }

    private static Path profiles(Path home, String text) throws IOException {
        Path file = home.resolve(Settings.DEFAULT_PROFILE_FILE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        return file;
    }

    @Test
    void aFlagWinsOverTheEnvironmentWhichWinsOverTheProfile(@TempDir Path home) throws IOException {
        profiles(home, "default.redis-url=redis://profile:6379\ndefault.kafka-bootstrap=profile:9092\n"
                + "default.rocketmq-namesrv=profile:9876\n");
        Environment environment = environment(Map.of("IDEM_REDIS_URL", "redis://env:6379",
                "IDEM_KAFKA_BOOTSTRAP", "env:9092"), home);

        Settings settings = Settings.resolve(Map.of(Setting.REDIS_URL, "redis://flag:6379"), environment, null, null);

        assertThat(settings.get(Setting.REDIS_URL)).contains("redis://flag:6379");
        assertThat(settings.get(Setting.KAFKA_BOOTSTRAP)).contains("env:9092");
        assertThat(settings.get(Setting.ROCKETMQ_NAMESRV)).contains("profile:9876");
        assertThat(settings.get(Setting.KEY_PREFIX)).contains("idem:");
        assertThat(settings.get(Setting.JDBC_TABLE)).contains("idem_effect");
        assertThat(settings.get(Setting.JDBC_URL)).isEmpty();
    }

    @Test
    void aNamedProfileIsReadWithItsKafkaClientSettings(@TempDir Path home) throws IOException {
        profiles(home, "default.kafka-bootstrap=local:9092\nprod.kafka-bootstrap=prod:9093\n"
                + "prod.kafka.security.protocol=SSL\nprod.jdbc-password=secret\n");

        Settings settings = Settings.resolve(Map.of(), environment(Map.of("IDEM_PROFILE", "prod"), home), null, null);

        assertThat(settings.get(Setting.KAFKA_BOOTSTRAP)).contains("prod:9093");
        assertThat(settings.kafkaProperties()).containsExactly(Map.entry("security.protocol", "SSL"));
        assertThat(settings.get(Setting.JDBC_PASSWORD)).contains("secret");
    }

    @Test
    void aMissingProfileOrFileOrSettingIsNamed(@TempDir Path home) throws IOException {
        assertThatThrownBy(() -> Settings.resolve(Map.of(), environment(Map.of(), home), home.resolve("none"), null))
                .hasMessageContaining("profile file " + home.resolve("none") + " does not exist");
        profiles(home, "default.redis-url=redis://local:6379\n");
        assertThatThrownBy(() -> Settings.resolve(Map.of(), environment(Map.of(), home), null, "prod"))
                .hasMessageContaining("no profile 'prod'");
        Settings settings = Settings.resolve(Map.of(), environment(Map.of(), home), null, null);
        assertThatThrownBy(() -> settings.require(Setting.KAFKA_BOOTSTRAP))
                .hasMessage("the Kafka bootstrap servers is not set: use --kafka-bootstrap, IDEM_KAFKA_BOOTSTRAP or "
                        + "'kafka-bootstrap' in the profile file");
    }
}
