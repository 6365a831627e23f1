package dev.idem.core;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The handler call handed to a {@link HandlerInterceptor}: it runs the handler on the first call and
 * throws on any later one, so that no interceptor can run the handler twice in one attempt.
 */
final class OnceProceed implements HandlerInterceptor.Proceed {

    private final HandlerInterceptor.Proceed handler;
    private final AtomicBoolean called = new AtomicBoolean();

    OnceProceed(HandlerInterceptor.Proceed handler) {
        this.handler = handler;
    }

    @Override
    public void proceed() throws Exception {
        if (!called.compareAndSet(false, true)) {
            throw new IllegalStateException("a HandlerInterceptor called proceed a second time in one attempt; "
                    + "the handler runs at most once per attempt");
        }
        handler.proceed();
    }
}
