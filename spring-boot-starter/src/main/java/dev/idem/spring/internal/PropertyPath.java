package dev.idem.spring.internal;

import dev.idem.core.KeySource;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A key read from the payload by a dotted path ({@code id}, {@code order.id}) through record
 * components, getters ({@code getId}, {@code isId}) or public fields, resolved once at start-up: a
 * name the type lacks fails then, naming the type.
 */
public final class PropertyPath {

    private PropertyPath() {
    }

    /**
     * @throws IllegalArgumentException naming the segment {@code type} lacks
     */
    public static KeySource<Object> of(Class<?> type, String path) {
        List<Function<Object, Object>> steps = new ArrayList<>();
        Class<?> current = type;
        for (String name : path.split("\\.")) {
            Method reader = reader(current, name);
            if (reader != null) {
                reader.setAccessible(true);
                steps.add(value -> invoke(reader, value));
                current = reader.getReturnType();
                continue;
            }
            Field field = field(current, name);
            if (field == null) {
                throw new IllegalArgumentException("key '" + path + "': " + current.getName() + " has no property '"
                        + name + "' (no record component, getter or public field of that name)");
            }
            steps.add(value -> read(field, value));
            current = field.getType();
        }
        return (envelope, payload) -> {
            Object value = payload;
            for (Function<Object, Object> step : steps) {
                if (value == null) {
                    return null;
                }
                value = step.apply(value);
            }
            return value == null ? null : value.toString();
        };
    }

    private static @Nullable Method reader(Class<?> type, String name) {
        if (type.isRecord()) {
            for (RecordComponent component : type.getRecordComponents()) {
                if (component.getName().equals(name)) {
                    return component.getAccessor();
                }
            }
        }
        String capital = name.substring(0, 1).toUpperCase(Locale.ROOT) + name.substring(1);
        for (String candidate : List.of("get" + capital, "is" + capital)) {
            try {
                Method method = type.getMethod(candidate);
                if (method.getReturnType() != void.class && !Modifier.isStatic(method.getModifiers())) {
                    return method;
                }
            } catch (NoSuchMethodException e) {
                // not this spelling
            }
        }
        return null;
    }

    private static @Nullable Field field(Class<?> type, String name) {
        try {
            Field field = type.getField(name);
            return Modifier.isStatic(field.getModifiers()) ? null : field;
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    private static Object invoke(Method reader, Object target) {
        try {
            return reader.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("reading " + reader.getName() + " of " + target.getClass().getName(), e);
        }
    }

    private static Object read(Field field, Object target) {
        try {
            return field.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("reading " + field.getName() + " of " + target.getClass().getName(), e);
        }
    }
}
