package dev.idem.core;

/**
 * The one slot around the handler call, for metrics, MDC, tracing or timeouts. It calls
 * {@code proceed} at most once (a second call throws {@link IllegalStateException}, and the attempt
 * fails unless the interceptor swallows it), and lets its exceptions through: in particular a
 * {@link DuplicateEffectException}, by which the JDBC ledger's handler refuses a copy (wrapped, it
 * is still found in the cause chain; swallowed, the copy is reported applied). Thread-safe.
 */
@FunctionalInterface
public interface HandlerInterceptor {

    /** The rest of the chain: the handler itself, or the next interceptor. */
    @FunctionalInterface
    interface Proceed {
        /** @throws Exception whatever the handler throws */
        void proceed() throws Exception;
    }

    /**
     * @throws Exception whatever {@code proceed} throws, or the interceptor's own failure
     */
    void intercept(Delivery<?> delivery, Proceed proceed) throws Exception;

    /** Calls the handler directly. */
    static HandlerInterceptor none() {
        return NoInterceptor.INSTANCE;
    }

    /** This interceptor around {@code inner}. */
    default HandlerInterceptor andThen(HandlerInterceptor inner) {
        return (delivery, proceed) -> intercept(delivery, () -> inner.intercept(delivery, proceed));
    }
}
