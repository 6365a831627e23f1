package dev.idem.spring;

import dev.idem.core.outbox.Outbox;
import dev.idem.listener.OutboxRuntime;
import dev.idem.redis.RedisClaimStore;
import dev.idem.redis.RedisUrl;
import dev.idem.spring.internal.ListenerMethods;
import dev.idem.spring.internal.ListenerProcessors;
import dev.idem.spring.internal.SpringOutbox;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Idem's beans in a Spring Boot application: the Redis client (from {@code idem.redis.url}, unless the
 * application has a {@code RedissonClient}), the claim store, the container that starts the
 * {@link IdempotentListener} methods, with {@code idem.outbox.enabled} the {@link Outbox} and its relay,
 * and, with the actuator, the health contributor.
 */
@AutoConfiguration
@EnableConfigurationProperties(IdemProperties.class)
public class IdemAutoConfiguration {

    /** Finds the listener methods as beans are created; static, as a bean post-processor must be. */
    @Bean
    static ListenerMethods idemListenerMethods() {
        return new ListenerMethods();
    }

    /** Redis for the claims, shut down after the listeners have let go of their records. */
    @Bean(destroyMethod = "shutdown")
    @ConditionalOnMissingBean(RedissonClient.class)
    RedissonClient idemRedisson(IdemProperties properties) {
        String url = properties.getRedis().getUrl();
        if (url == null || url.isBlank()) {
            throw new IllegalStateException("idem.redis.url is required but not set (or provide a RedissonClient bean)");
        }
        try {
            return Redisson.create(RedisUrl.parse(url).config());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("idem.redis.url: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new IllegalStateException("idem.redis.url '" + RedisUrl.redacted(url) + "': cannot connect: "
                    + e.getMessage(), e);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    RedisClaimStore idemClaimStore(RedissonClient redisson, IdemProperties properties) {
        try {
            RedisClaimStore.Builder builder = RedisClaimStore.builder(redisson).keyPrefix(properties.getRedis().getKeyPrefix());
            if (properties.getRedis().getDoneWindow() != null) {
                builder.doneWindow(properties.getRedis().getDoneWindow());
            }
            if (properties.getRedis().getAttemptsWindow() != null) {
                builder.attemptsWindow(properties.getRedis().getAttemptsWindow());
            }
            if (properties.getRedis().getGuardedDoneWindow() != null) {
                builder.guardedDoneWindow(properties.getRedis().getGuardedDoneWindow());
            }
            RedisClaimStore store = builder.build();
            if (store.doneWindow().compareTo(store.attemptsWindow()) < 0) {
                throw new IllegalStateException("idem.redis.done-window (" + store.doneWindow() + ") must be >= "
                        + "idem.redis.attempts-window (" + store.attemptsWindow() + "): set both, e.g. 1h");
            }
            return store;
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("idem.redis.key-prefix, done-window, guarded-done-window, attempts-window: "
                    + e.getMessage(), e);
        }
    }

    @Bean
    ListenerProcessors idemListenerProcessors(ListableBeanFactory beans, IdemProperties properties,
                                              RedisClaimStore claims) {
        return new ListenerProcessors(beans, properties, claims);
    }

    @Bean
    IdemListenerContainer idemListenerContainer(ListenerMethods methods, ListableBeanFactory beans,
                                                Environment environment, IdemProperties properties,
                                                ListenerProcessors processors) {
        return new IdemListenerContainer(methods, beans, environment, properties, processors);
    }

    /** The outbox: the table and its relay (closed before the {@code DataSource}), and the bean that sends. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "idem.outbox", name = "enabled", havingValue = "true")
    static class OutboxBeans {
        @Bean(destroyMethod = "close")
        @DependsOnDatabaseInitialization   // after Flyway, Liquibase or spring.sql.init have made the table
        OutboxRuntime idemOutboxRuntime(ListableBeanFactory beans, IdemProperties properties,
                                        ListenerProcessors processors) {
            return SpringOutbox.runtime(beans, properties, processors);
        }

        @Bean
        @ConditionalOnMissingBean
        Outbox idemOutbox(OutboxRuntime runtime, ListableBeanFactory beans, IdemProperties properties) {
            return SpringOutbox.outbox(runtime, beans, properties);
        }
    }

    /** Idem's part of {@code /actuator/health}, when the actuator's health module is there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class Health {
        @Bean
        @ConditionalOnMissingBean(name = "idemHealthIndicator")
        IdemHealthIndicator idemHealthIndicator(IdemListenerContainer container, RedissonClient redisson,
                                                IdemProperties properties, ObjectProvider<OutboxRuntime> outbox) {
            return new IdemHealthIndicator(container, redisson, properties.getHealth().getStuckAfter(),
                    outbox.getIfAvailable());
        }
    }
}
