package dev.idem.micronaut;

import io.micronaut.context.exceptions.ConfigurationException;
import io.micronaut.context.processor.ExecutableMethodProcessor;
import io.micronaut.inject.BeanDefinition;
import io.micronaut.inject.ExecutableMethod;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Collects the {@link IdempotentListener} and {@link IdempotentCompensation} methods Micronaut's
 * annotation processor found at compile time (no classpath scanning, no reflection), and the names
 * of the {@link Idempotent} listeners, so that configuration and names are checked across both.
 */
@Singleton
final class IdemListenerRegistry {

    record Found(BeanDefinition<?> bean, ExecutableMethod<?, ?> method) {
    }

    private final List<Found> listeners = new ArrayList<>();
    private final List<Found> compensations = new ArrayList<>();
    private final Map<String, String> wrapped = new LinkedHashMap<>();

    synchronized List<Found> listeners() {
        return List.copyOf(listeners);
    }

    synchronized List<Found> compensations() {
        return List.copyOf(compensations);
    }

    /** The wrapped {@code @KafkaListener} methods' names, each with where it is declared. */
    synchronized Map<String, String> wrapped() {
        return Map.copyOf(wrapped);
    }

    /** Records a wrapped listener's name; a second listener with the same name fails start-up. */
    synchronized void wrapped(String name, String where) {
        String other = wrapped.putIfAbsent(name, where);
        if (other != null && !other.equals(where)) {
            throw new ConfigurationException("two Idem listeners are named '" + name + "': " + other + " and " + where
                    + "; give one a different @Idempotent(name = ...)");
        }
    }

    synchronized void listener(BeanDefinition<?> bean, ExecutableMethod<?, ?> method) {
        listeners.add(new Found(bean, method));
    }

    synchronized void compensation(BeanDefinition<?> bean, ExecutableMethod<?, ?> method) {
        compensations.add(new Found(bean, method));
    }

    /** Receives the listener methods. */
    @Singleton
    static final class Listeners implements ExecutableMethodProcessor<IdempotentListener> {
        private final IdemListenerRegistry registry;

        Listeners(IdemListenerRegistry registry) {
            this.registry = registry;
        }

        @Override
        public void process(BeanDefinition<?> beanDefinition, ExecutableMethod<?, ?> method) {
            registry.listener(beanDefinition, method);
        }
    }

    /** Receives the compensation methods. */
    @Singleton
    static final class Compensations implements ExecutableMethodProcessor<IdempotentCompensation> {
        private final IdemListenerRegistry registry;

        Compensations(IdemListenerRegistry registry) {
            this.registry = registry;
        }

        @Override
        public void process(BeanDefinition<?> beanDefinition, ExecutableMethod<?, ?> method) {
            registry.compensation(beanDefinition, method);
        }
    }
}
