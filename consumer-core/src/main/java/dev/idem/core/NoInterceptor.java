package dev.idem.core;

/**
 * The empty interceptor slot ({@link HandlerInterceptor#none()}): one instance, which the handler step
 * knows, so that a processor without an interceptor calls its handler directly, without the
 * once-only wrapper an interceptor gets (it allocated three objects per message).
 */
final class NoInterceptor implements HandlerInterceptor {

    static final NoInterceptor INSTANCE = new NoInterceptor();

    private NoInterceptor() {
    }

    @Override
    public void intercept(Delivery<?> delivery, Proceed proceed) throws Exception {
        proceed.proceed();
    }
}
