package dev.idem.spring.internal;

import dev.idem.core.Delivery;
import dev.idem.listener.ListenerHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Calls a listener method on the bean as the context holds it (its proxy's advice applies) with the
 * payload, and the delivery and the transaction's connection where it asks for them; the method's
 * own exception reaches Idem as it was thrown.
 */
public final class Invoker implements ListenerHandler {

    private final Object bean;
    private final Method method;
    private final int arity;
    private final int payload;
    private final int delivery;
    private final int connection;

    /**
     * @throws IllegalArgumentException when the method's parameters are not one payload, optionally a
     *                                  {@link Delivery} and a {@link Connection}
     */
    public Invoker(Object bean, Method method, String where) {
        this.bean = bean;
        this.method = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(this.method);
        Class<?>[] types = method.getParameterTypes();
        int p = -1;
        int d = -1;
        int c = -1;
        for (int i = 0; i < types.length; i++) {
            if (Delivery.class.equals(types[i])) {
                d = i;
            } else if (Connection.class.equals(types[i])) {
                c = i;
            } else if (p < 0) {
                p = i;
            } else {
                throw new IllegalArgumentException("@IdempotentListener method " + where + " has two payload parameters ("
                        + types[p].getSimpleName() + ", " + types[i].getSimpleName()
                        + "); it takes one payload, optionally a Delivery and a java.sql.Connection");
            }
        }
        if (p < 0) {
            throw new IllegalArgumentException("@IdempotentListener method " + where + " has no payload parameter");
        }
        this.arity = types.length;
        this.payload = p;
        this.delivery = d;
        this.connection = c;
    }

    /** The payload parameter's type. */
    public Class<?> payloadType() {
        return method.getParameterTypes()[payload];
    }

    @Override
    public boolean wantsConnection() {
        return connection >= 0;
    }

    @Override
    public void invoke(Delivery<Object> d, @Nullable Connection tx) throws Exception {
        Object[] values = new Object[arity];
        values[payload] = d.payload();
        if (delivery >= 0) {
            values[delivery] = d;
        }
        if (connection >= 0) {
            values[connection] = tx;
        }
        call(bean, method, values);
    }

    /** Calls {@code method} on {@code target}, throwing what the method threw. */
    public static void call(Object target, Method method, Object... args) throws Exception {
        try {
            method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throwCause(e);
        }
    }

    /** Throws what a wrapper (reflection's, a framework's) says the method threw: its cause, else the wrapper. */
    public static void throwCause(Exception wrapper) throws Exception {
        Throwable cause = wrapper.getCause();
        if (cause instanceof Exception exception) {
            throw exception;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        throw wrapper;
    }
}
