package dev.idem.micronaut;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.testkit.IdemTestKit;
import dev.idem.testkit.RedisEndpoint;
import io.micronaut.context.ApplicationContext;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Placeholders in {@code @IdempotentListener} are resolved in each application context's own
 * environment. Micronaut's generated annotation metadata is shared by the contexts of one JVM (a
 * test suite, an application that starts a second context), and it resolved them in the first
 * context's environment: the second context consumed the first one's topic as the first one's group.
 */
@IdemTestKit
class AnnotationPlaceholdersIT {

    private static ApplicationContext start(RedisEndpoint redis, String which) {
        return ApplicationContext.run(Map.of(
                "test.health.topic", "topic-" + which,
                "test.health.group", "group-" + which,
                "idem.redis.address", redis.uri().toString(),
                // nothing is consumed: the test reads what each context's listener was started with
                "idem.kafka.bootstrap.servers", "127.0.0.1:1"));
    }

    private static IdemListeners.RunningListener health(ApplicationContext context) {
        return context.getBean(IdemListeners.class).listeners().stream()
                .filter(l -> l.name().equals("health-orders")).findFirst().orElseThrow();
    }

    @Test
    void eachApplicationContextResolvesItsListenersPlaceholdersInItsOwnEnvironment(RedisEndpoint redis) {
        try (ApplicationContext first = start(redis, "first"); ApplicationContext second = start(redis, "second")) {
            assertThat(health(first).topic()).isEqualTo("topic-first");
            assertThat(health(first).group()).isEqualTo("group-first");
            assertThat(health(second).topic()).isEqualTo("topic-second");
            assertThat(health(second).group()).isEqualTo("group-second");
        }
    }
}
