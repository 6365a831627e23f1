package dev.idem.spring.internal;

import dev.idem.core.DeadLetter;
import java.lang.reflect.Method;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/** An {@code @IdempotentCompensation} method, called with the dead letter on the bean as the context holds it. */
public record CompensationHook(Object bean, Method method) {

    public CompensationHook {
        method = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(method);
    }

    public void compensate(DeadLetter deadLetter) throws Exception {
        Invoker.call(bean, method, deadLetter);
    }
}
