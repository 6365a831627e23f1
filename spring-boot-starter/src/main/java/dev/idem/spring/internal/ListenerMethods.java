package dev.idem.spring.internal;

import dev.idem.spring.Idempotent;
import dev.idem.spring.IdempotentCompensation;
import dev.idem.spring.IdempotentListener;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds the {@link IdempotentListener}, {@link Idempotent} and {@link IdempotentCompensation} methods of every bean as
 * the context creates it (as spring-kafka finds {@code @KafkaListener} methods), keeping the bean as
 * the context holds it: a proxy's advice ({@code @Transactional}) applies when Idem calls it.
 */
public final class ListenerMethods implements BeanPostProcessor {

    /** A method found: the bean (the context's object, proxy included), the target's method, its annotation. */
    public record Found<A>(String beanName, Object bean, Method method, A annotation) {
    }

    private final List<Found<IdempotentListener>> listeners = new ArrayList<>();
    private final List<Found<IdempotentCompensation>> compensations = new ArrayList<>();
    private final List<Found<Idempotent>> wrapped = new ArrayList<>();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (type.getName().startsWith("java.") || type.getName().startsWith("org.springframework.")) {
            return bean;
        }
        Map<Method, IdempotentListener> found = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<IdempotentListener>) method ->
                        AnnotatedElementUtils.findMergedAnnotation(method, IdempotentListener.class));
        Map<Method, IdempotentCompensation> hooks = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<IdempotentCompensation>) method ->
                        AnnotatedElementUtils.findMergedAnnotation(method, IdempotentCompensation.class));
        Map<Method, Idempotent> around = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<Idempotent>) method ->
                        AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class));
        synchronized (this) {
            around.forEach((method, annotation) -> wrapped.add(new Found<>(beanName, bean, method, annotation)));
            found.forEach((method, annotation) -> listeners.add(new Found<>(beanName, bean, method, annotation)));
            hooks.forEach((method, annotation) -> compensations.add(new Found<>(beanName, bean, method, annotation)));
        }
        return bean;
    }

    public synchronized List<Found<IdempotentListener>> listeners() {
        return List.copyOf(listeners);
    }

    /** The {@link Idempotent} methods: spring-kafka listeners Idem wraps. */
    public synchronized List<Found<Idempotent>> wrapped() {
        return List.copyOf(wrapped);
    }

    public synchronized List<Found<IdempotentCompensation>> compensations() {
        return List.copyOf(compensations);
    }
}
