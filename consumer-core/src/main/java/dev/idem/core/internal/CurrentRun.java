package dev.idem.core.internal;

import dev.idem.core.IdempotencyKey;
import org.jspecify.annotations.Nullable;

/**
 * The handler run under way on this thread, as the processor marks it around the handler: what the
 * outbox derives its stable ids from (the run's key and how many messages it sent). Not thread-safe:
 * one per run, on the run's thread.
 */
public final class CurrentRun {

    private static final ThreadLocal<@Nullable CurrentRun> CURRENT = new ThreadLocal<>();

    private final IdempotencyKey key;
    private int sends;

    private CurrentRun(IdempotencyKey key) {
        this.key = key;
    }

    /** The run under way on this thread, or null outside a handler. */
    public static @Nullable CurrentRun get() {
        return CURRENT.get();
    }

    /** Marks a run of {@code key} on this thread; returns what to restore with {@link #leave}. */
    public static @Nullable CurrentRun enter(IdempotencyKey key) {
        CurrentRun previous = CURRENT.get();
        CURRENT.set(new CurrentRun(key));
        return previous;
    }

    /** Ends the run on this thread, restoring {@code previous}. */
    public static void leave(@Nullable CurrentRun previous) {
        // Set, not removed: the thread's entry stays for its next run (a removed one is made again
        // per message, which showed in allocation profiles); the variable is static, so it holds
        // nothing but null between runs.
        CURRENT.set(previous);
    }

    /** The incoming message's key. */
    public IdempotencyKey key() {
        return key;
    }

    /** The place of the run's next send: 0, 1, 2... */
    public int nextSend() {
        return sends++;
    }
}
