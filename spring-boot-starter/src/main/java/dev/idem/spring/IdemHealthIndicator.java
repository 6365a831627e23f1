package dev.idem.spring;

import dev.idem.core.ConsumerState;
import dev.idem.core.outbox.OutboxRelay;
import dev.idem.listener.OutboxRuntime;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RedissonClient;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Idem's part of {@code /actuator/health} (contributor {@code idem}): UP when Redis answers, every
 * listener's consumer runs, no message has come back deferred for longer than
 * {@code idem.health.stuck-after}, and the outbox's relay runs with no row unsent for longer than
 * {@code idem.outbox.stuck-after}; DOWN naming what is not.
 */
public final class IdemHealthIndicator implements HealthIndicator {

    private final IdemListenerContainer container;
    private final RedissonClient redisson;
    private final Duration stuckAfter;
    private final @Nullable OutboxRuntime outbox;

    /** @param outbox the outbox, or null when {@code idem.outbox.enabled} is not set */
    public IdemHealthIndicator(IdemListenerContainer container, RedissonClient redisson, Duration stuckAfter,
                               @Nullable OutboxRuntime outbox) {
        this.container = container;
        this.redisson = redisson;
        this.stuckAfter = stuckAfter;
        this.outbox = outbox;
    }

    @Override
    public Health health() {
        Map<String, Object> details = new LinkedHashMap<>();
        boolean up;
        try {
            up = redisson.getKeys().count() >= 0;
        } catch (RuntimeException e) {
            up = false;
        }
        details.put("redis", up ? "UP" : "DOWN");
        for (IdemListenerContainer.RunningListener listener : container.listeners()) {
            ConsumerState state = listener.consumer().state();
            Optional<Duration> deferred = listener.consumer().oldestDeferral();
            boolean stuck = deferred.filter(age -> age.compareTo(stuckAfter) > 0).isPresent();
            boolean running = state.isLive();
            up &= running && !stuck;
            details.put(listener.name(), stuck ? "DOWN: a message has come back deferred for "
                    + deferred.get().toSeconds() + " s" : running ? "UP" : "DOWN: consumer " + state);
        }
        if (outbox != null) {
            OutboxRelay.Health relay = outbox.health();
            up &= relay.up();
            details.put("outbox", (relay.up() ? "UP: " : "DOWN: ") + relay.detail());
        }
        return (up ? Health.up() : Health.down()).withDetails(details).build();
    }
}
