package dev.idem.micronaut.processor;

import io.micronaut.core.annotation.AnnotationValue;
import io.micronaut.inject.ast.ClassElement;
import io.micronaut.inject.ast.MethodElement;
import io.micronaut.inject.ast.ParameterElement;
import io.micronaut.inject.visitor.TypeElementVisitor;
import io.micronaut.inject.visitor.VisitorContext;
import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Fails compilation on an Idem listener the application could not start: an
 * {@code @IdempotentListener} method without a payload parameter or with two, two listeners with
 * one name, and an {@code @Idempotent} method whose {@code @KafkaListener} would let
 * micronaut-kafka, not Idem, decide redelivery. The same checks run again at start-up; this visitor
 * reports them where the code is. Names are compared among the classes compiled together (names
 * with placeholders are left to start-up).
 */
public final class IdemListenerChecks implements TypeElementVisitor<Object, Object> {

    static final String LISTENER = "dev.idem.micronaut.IdempotentListener";
    static final String WRAPPED = "dev.idem.micronaut.Idempotent";
    private static final String KAFKA_LISTENER = "io.micronaut.configuration.kafka.annotation.KafkaListener";
    private static final String TOPIC = "io.micronaut.configuration.kafka.annotation.Topic";
    private static final String TOPICS = "io.micronaut.configuration.kafka.annotation.Topics";
    private static final Set<String> NOT_PAYLOAD = Set.of("dev.idem.core.Delivery", "java.sql.Connection");
    private static final String RECORD = "org.apache.kafka.clients.consumer.ConsumerRecord";

    private final Map<String, String> names = new HashMap<>();

    @Override
    public Set<String> getSupportedAnnotationNames() {
        return Set.of(LISTENER, WRAPPED);
    }

    @Override
    public VisitorKind getVisitorKind() {
        return VisitorKind.ISOLATING;
    }

    @Override
    public void visitMethod(MethodElement method, VisitorContext context) {
        if (method.hasDeclaredAnnotation(LISTENER)) {
            checkListener(method, context);
        }
        if (method.hasDeclaredAnnotation(WRAPPED)) {
            checkWrapped(method, context);
        }
    }

    private void checkListener(MethodElement method, VisitorContext context) {
        String where = where(method);
        List<String> payloads = new ArrayList<>();
        for (ParameterElement parameter : method.getParameters()) {
            if (!NOT_PAYLOAD.contains(parameter.getType().getName())) {
                payloads.add(parameter.getName());
            }
        }
        if (payloads.isEmpty()) {
            context.fail("@IdempotentListener method " + where + " has no payload parameter; it takes one payload, "
                    + "optionally a Delivery and a java.sql.Connection", method);
        } else if (payloads.size() > 1) {
            context.fail("@IdempotentListener method " + where + " has two payload parameters " + payloads
                    + "; it takes one payload, optionally a Delivery and a java.sql.Connection", method);
        }
        String topic = method.stringValue(LISTENER, "topic").orElse("");
        String group = method.stringValue(LISTENER, "group").orElse("");
        String name = method.stringValue(LISTENER, "name").filter(n -> !n.isBlank()).orElse(group + "-" + topic);
        unique(name, method, context);
    }

    private void checkWrapped(MethodElement method, VisitorContext context) {
        String where = where(method);
        ClassElement owner = method.getOwningType();
        AnnotationValue<Annotation> listener = owner.getAnnotation(KAFKA_LISTENER);
        if (listener == null) {
            context.fail("@Idempotent on " + where + " wraps micronaut-kafka listeners: the class needs @KafkaListener",
                    method);
            return;
        }
        if (owner.isFinal()) {
            context.fail("@Idempotent on " + where + ": the class must not be final (Micronaut subclasses it for the "
                    + "advice)", method);
        }
        Optional<AnnotationValue<Annotation>> strategy = listener.getAnnotation("errorStrategy");
        String value = strategy.flatMap(AnnotationValue::stringValue).orElse("NONE");
        int retryCount = strategy.flatMap(s -> s.intValue("retryCount").stream().boxed().findFirst()).orElse(1);
        if (!"RETRY_ON_ERROR".equals(value) || retryCount != Integer.MAX_VALUE) {
            context.fail("@Idempotent on " + where + ": its @KafkaListener must have errorStrategy = "
                    + "@ErrorStrategy(value = ErrorStrategyValue.RETRY_ON_ERROR, retryCount = Integer.MAX_VALUE) so "
                    + "that Idem, not micronaut-kafka, decides redelivery and the dead letter (it has " + value
                    + ", retryCount " + retryCount + ")", method);
        }
        boolean record = false;
        for (ParameterElement parameter : method.getParameters()) {
            record |= RECORD.equals(parameter.getType().getName());
        }
        if (!record) {
            context.fail("@Idempotent on " + where + ": the method must declare the ConsumerRecord parameter "
                    + "(micronaut-kafka binds it)", method);
        }
        if ("PROPERTY".equals(method.stringValue(WRAPPED, "keySource").orElse(""))) {
            context.fail("@Idempotent on " + where + ": keySource PROPERTY is for @IdempotentListener; use "
                    + "MESSAGE_KEY, HEADER, MESSAGE_ID or OUTBOX_ID", method);
        }
        String group = listener.stringValue("groupId").filter(g -> !g.isBlank())
                .or(listener::stringValue).orElse("");
        List<AnnotationValue<Annotation>> found = new ArrayList<>(method.getAnnotationValuesByName(TOPIC));
        method.findAnnotation(TOPICS).ifPresent(container -> found.addAll(container.getAnnotations("value")));
        Set<String> topics = new LinkedHashSet<>();
        for (AnnotationValue<Annotation> topic : found) {
            topics.addAll(List.of(topic.stringValues()));
            topics.addAll(List.of(topic.stringValues("patterns")));
        }
        String name = method.stringValue(WRAPPED, "name").filter(n -> !n.isBlank())
                .orElse(group + "-" + String.join(",", topics));
        unique(name, method, context);
    }

    private void unique(String name, MethodElement method, VisitorContext context) {
        if (name.contains("${")) {
            return;
        }
        String other = names.putIfAbsent(name, where(method));
        if (other != null && !other.equals(where(method))) {
            context.fail("two Idem listeners are named '" + name + "': " + other + " and " + where(method)
                    + "; give one a different name", method);
        }
    }

    private static String where(MethodElement method) {
        return method.getOwningType().getName() + "." + method.getName();
    }
}
