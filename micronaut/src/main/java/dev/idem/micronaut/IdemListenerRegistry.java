package dev.idem.micronaut;

import io.micronaut.context.processor.ExecutableMethodProcessor;
import io.micronaut.inject.BeanDefinition;
import io.micronaut.inject.ExecutableMethod;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects the {@link IdempotentListener} and {@link IdempotentCompensation} methods Micronaut's
 * annotation processor found at compile time: no classpath scanning, no reflection.
 */
@Singleton
final class IdemListenerRegistry {

    record Found(BeanDefinition<?> bean, ExecutableMethod<?, ?> method) {
    }

    private final List<Found> listeners = new ArrayList<>();
    private final List<Found> compensations = new ArrayList<>();

    synchronized List<Found> listeners() {
        return List.copyOf(listeners);
    }

    synchronized List<Found> compensations() {
        return List.copyOf(compensations);
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
