package dev.idem.testkit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The containers mode and docker/compose.yml run the broker versions the build tests with. */
class ContainerImagesTest {

    private static final Pattern IMAGE = Pattern.compile("^\\s*image:\\s*(\\S+)\\s*$", Pattern.MULTILINE);

    @Test
    void containersModeRunsTheBrokerVersionsTheBuildTestsWith() {
        // Given the versions of the in-process brokers (the build passes them in)
        String kafka = System.getProperty("idem.test.kafka.version");
        String rocketMq = System.getProperty("idem.test.rocketmq.version");

        // Then the container images carry the same versions
        assertThat(ContainerFixtures.KAFKA_IMAGE).isEqualTo("apache/kafka:" + kafka);
        assertThat(ContainerFixtures.ROCKETMQ_IMAGE).isEqualTo("apache/rocketmq:" + rocketMq);
    }

    @Test
    void composeFileUsesTheImagesOfTheContainersMode() throws IOException {
        // Given docker/compose.yml
        String compose = Files.readString(Path.of(System.getProperty("idem.test.compose.file")));

        // When its images are read
        Set<String> images = new TreeSet<>();
        Matcher matcher = IMAGE.matcher(compose);
        while (matcher.find()) {
            images.add(matcher.group(1));
        }

        // Then they are exactly the containers mode's
        assertThat(images).containsExactlyInAnyOrder(ContainerFixtures.REDIS_IMAGE, ContainerFixtures.KAFKA_IMAGE,
                ContainerFixtures.ROCKETMQ_IMAGE, ContainerFixtures.POSTGRES_IMAGE);
    }
}
