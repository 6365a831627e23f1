package dev.idem.micronaut;

import io.micronaut.context.annotation.Requires;
import io.micronaut.core.async.publisher.Publishers;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import jakarta.inject.Singleton;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.reactivestreams.Publisher;
import org.redisson.api.RedissonClient;

/**
 * Idem's part of {@code /health} (with micronaut-management): UP when Redis answers and every
 * listener's consumer runs; a consumer that stopped or failed, or an unreachable Redis, makes it
 * DOWN. The details name each listener's state.
 */
@Singleton
@Requires(classes = HealthIndicator.class)
public final class IdemHealthIndicator implements HealthIndicator {

    private final IdemListeners listeners;

    IdemHealthIndicator(IdemListeners listeners) {
        this.listeners = listeners;
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
        }
        return HealthResult.builder("idem", up ? HealthStatus.UP : HealthStatus.DOWN).details(details).build();
    }
}
