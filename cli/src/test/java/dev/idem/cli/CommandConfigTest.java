package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.cli.config.Setting;
import dev.idem.cli.config.CommandConfig;
import dev.idem.cli.letters.KafkaDeadLetterTopic;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommandConfigTest {

    private static Environment environment(Map<String, String> variables, Path home) {
        return new Environment(variables, home, "host", "user", Clock.systemUTC(), false);
    }

    private static Path profiles(Path home, String text) throws IOException {
        Path file = home.resolve(CommandConfig.DEFAULT_PROFILE_FILE);
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

        CommandConfig settings = CommandConfig.resolve(Map.of(Setting.REDIS_URL, "redis://flag:6379"), environment, null, null);

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

        CommandConfig settings = CommandConfig.resolve(Map.of(), environment(Map.of("IDEM_PROFILE", "prod"), home), null, null);

        assertThat(settings.get(Setting.KAFKA_BOOTSTRAP)).contains("prod:9093");
        assertThat(settings.kafkaProperties()).containsExactly(Map.entry("security.protocol", "SSL"));
        assertThat(settings.get(Setting.JDBC_PASSWORD)).contains("secret");
    }

    @Test
    void aMissingProfileOrFileOrSettingIsNamed(@TempDir Path home) throws IOException {
        assertThatThrownBy(() -> CommandConfig.resolve(Map.of(), environment(Map.of(), home), home.resolve("none"), null))
                .hasMessageContaining("profile file " + home.resolve("none") + " does not exist");
        profiles(home, "default.redis-url=redis://local:6379\n");
        assertThatThrownBy(() -> CommandConfig.resolve(Map.of(), environment(Map.of(), home), null, "prod"))
                .hasMessageContaining("no profile 'prod'");
        CommandConfig settings = CommandConfig.resolve(Map.of(), environment(Map.of(), home), null, null);
        assertThatThrownBy(() -> settings.require(Setting.KAFKA_BOOTSTRAP))
                .hasMessage("the Kafka bootstrap servers is not set: use --kafka-bootstrap, IDEM_KAFKA_BOOTSTRAP or "
                        + "'kafka-bootstrap' in the profile file");
    }

    @Test
    void theReadmesSaslSslProfileGivesTheKafkaClientsTheirSettingsAndATypoIsRefusedByName(@TempDir Path home)
            throws IOException {
        // The profile shown in docs/guide/operating.md
        profiles(home, """
                prod.kafka-bootstrap=kafka-1.prod.example:9093
                prod.kafka.security.protocol=SASL_SSL
                prod.kafka.sasl.mechanism=SCRAM-SHA-512
                prod.kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
                    username="idem-ops" password="change-me";
                prod.kafka.ssl.truststore.location=/etc/idem/kafka-truststore.p12
                prod.kafka.ssl.truststore.password=change-me
                """);

        CommandConfig settings = CommandConfig.resolve(Map.of(), environment(Map.of(), home), null, "prod");

        assertThat(settings.kafkaProperties()).containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                .containsEntry("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required "
                        + "username=\"idem-ops\" password=\"change-me\";")
                .containsEntry("ssl.truststore.location", "/etc/idem/kafka-truststore.p12").hasSize(5);
        KafkaDeadLetterTopic.checkClientSettings(settings.kafkaProperties());
        assertThatThrownBy(() -> KafkaDeadLetterTopic.checkClientSettings(Map.of("security.protocl", "SSL")))
                .isInstanceOf(CliException.class)
                .hasMessage("kafka.security.protocl in the profile file is not a Kafka client setting");
    }
}
