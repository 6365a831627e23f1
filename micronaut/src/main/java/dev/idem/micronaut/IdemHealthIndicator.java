package dev.idem.micronaut;

import dev.idem.core.outbox.OutboxRelay;
import dev.idem.listener.OutboxRuntime;
import dev.idem.micronaut.internal.PropertyReader;
import io.micronaut.context.BeanContext;
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
 * DOWN, and so does an outbox ({@code idem.outbox.enabled}) whose relay stopped or whose oldest unsent
 * row has waited longer than {@code idem.outbox.stuck-after}. The details name each listener's state,
 * a stuck listener's oldest deferral, and the outbox's state.
 */
@Singleton
@Requires(classes = HealthIndicator.class)
public final class IdemHealthIndicator implements HealthIndicator {

    private final IdemListeners listeners;
    private final Duration stuckAfter;
    private final BeanContext context;

    IdemHealthIndicator(IdemListeners listeners, Environment environment, BeanContext context) {
        this.listeners = listeners;
        this.context = context;
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
        Optional<OutboxRuntime> outbox = context.findBean(OutboxRuntime.class);
        if (outbox.isPresent()) {
            OutboxRelay.Health relay = outbox.get().health();
            details.put("outbox", (relay.up() ? "UP: " : "DOWN: ") + relay.detail());
            up &= relay.up();
        }
        return HealthResult.builder("idem", up ? HealthStatus.UP : HealthStatus.DOWN).details(details).build();
    }
}
