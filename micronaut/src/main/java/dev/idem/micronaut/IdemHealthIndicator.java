package dev.idem.micronaut;

import dev.idem.micronaut.internal.PropertyReader;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.env.Environment;
import io.micronaut.core.async.publisher.Publishers;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.reactivestreams.Publisher;
import org.redisson.api.RedissonClient;

/**
 * Idem's part of {@code /health} (with micronaut-management): UP when Redis answers, every
 * listener's consumer runs and no message is stuck; a consumer that stopped or failed, an
 * unreachable Redis, or a message that has come back deferred for longer than
 * {@code idem.health.stuck-after} (default 5 minutes: it holds its partition or queue) makes it
 * DOWN. The details name each listener's state, and a stuck listener's oldest deferral.
 */
@Singleton
@Requires(classes = HealthIndicator.class)
public final class IdemHealthIndicator implements HealthIndicator {

    private final IdemListeners listeners;
    private final Duration stuckAfter;

    IdemHealthIndicator(IdemListeners listeners, Environment environment) {
        this.listeners = listeners;
        this.stuckAfter = new PropertyReader(environment).durationSetting("idem.health.stuck-after", "5m",
                "idem.health.stuck-after");
    }

    @Override
    public Publisher<HealthResult> getResult() {
        return Publishers.just(result());
    }

    /** The result now. */
    public HealthResult result() {
        Map<String, Object> details = new LinkedHashMap<>();
        boolean up = true;
        Optional<RedissonClient> redisson = listeners.redisson();
        if (redisson.isPresent()) {
            boolean redis;
            try {
                redis = redisson.get().getKeys().count() >= 0;
            } catch (RuntimeException e) {
                redis = false;
            }
            details.put("redis", redis ? "UP" : "DOWN");
            up = redis;
        }
        for (IdemListeners.RunningListener listener : listeners.listeners()) {
            boolean running;
            try {
                running = listener.isRunning().getAsBoolean();
            } catch (RuntimeException e) {
                running = false;
            }
            details.put(listener.name(), running ? "RUNNING" : "STOPPED");
            up &= running;
            Optional<Duration> deferred = listener.oldestDeferral().get();
            if (deferred.filter(age -> age.compareTo(stuckAfter) > 0).isPresent()) {
                details.put(listener.name() + ".stuck", "a message has come back deferred for " + deferred.get()
                        + " (idem.health.stuck-after " + stuckAfter + ")");
                up = false;
            }
        }
        return HealthResult.builder("idem", up ? HealthStatus.UP : HealthStatus.DOWN).details(details).build();
    }
}
