package dev.idem.kafka.internal;

import dev.idem.core.ConsumerState;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The life both Idem Kafka consumers lead: one start, the state and the failure heard last, one
 * ordered close and one release of what the consumer holds once no record runs. Thread-safe.
 */
public final class ConsumerLifecycle implements LoopEvents {

    /** A poll loop: run on its own thread until told to stop. */
    public interface Loop extends Runnable {
        /** Stop taking work and end the run once what runs is finished or released. Any thread. */
        void stop();
    }

    private final String name;
    private final Logger log;
    private final Consumer<Throwable> onFailure;
    private final Runnable releaser;
    private final AtomicBoolean released = new AtomicBoolean();
    private final CompletableFuture<Void> idle = new CompletableFuture<>();
    private volatile ConsumerState state = ConsumerState.NEW;
    private volatile @Nullable Throwable failure;
    private @Nullable Loop loop;
    private @Nullable Thread pollThread;
    private boolean closed;

    /**
     * @param name      the consumer's class name, for messages
     * @param log       the consumer's logger
     * @param onFailure the user's failure listener
     * @param releaser  shuts the consumer's executors and closes its processor; run once, by {@link #release()}
     */
    public ConsumerLifecycle(String name, Logger log, Consumer<Throwable> onFailure, Runnable releaser) {
        this.name = name;
        this.log = log;
        this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
        this.releaser = releaser;
    }

    /**
     * Makes the loop (which may throw: nothing is started then) and runs it on a thread of this name.
     *
     * @throws IllegalStateException if already started or closed
     */
    public synchronized void start(Supplier<? extends Loop> loops, String threadName) {
        if (closed) {
            throw new IllegalStateException("consumer is closed; build a new " + name + " to consume again");
        }
        if (loop != null) {
            throw new IllegalStateException("consumer already started");
        }
        Loop made = loops.get();
        loop = made;
        pollThread = new Thread(made, threadName);
        state = ConsumerState.STARTING;
        pollThread.start();
    }

    /**
     * Closes once: a consumer never started closes its client and releases at once; a started one
     * tells its loop to stop and waits up to {@code bound} for the poll thread, which closes the client
     * and releases. Called on the poll thread itself (from {@code onFailure}), it does not wait.
     */
    public void close(Runnable closeUnstartedClient, Duration bound) {
        Loop running;
        Thread thread;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            running = loop;
            thread = pollThread;
        }
        if (running == null) {
            try {
                closeUnstartedClient.run();
            } finally {
                release();
                state = ConsumerState.STOPPED;
            }
            return;
        }
        running.stop();
        // The loop and its thread are set together, under the lock, by start().
        if (thread == null || Thread.currentThread() == thread) {
            return;
        }
        try {
            thread.join(bound.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("{}'s poll thread is still closing after {}; it finishes in the background", name, bound);
        }
    }

    /** Daemon threads of one name, for a consumer's executors: they never keep the JVM alive. */
    public static ThreadFactory daemonThreads(String name) {
        return task -> {
            Thread thread = new Thread(task, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Lets go of the executors, lease renewal and the dead-letter producer, once. */
    public void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        try {
            releaser.run();
        } catch (RuntimeException e) {
            log.warn("closing the processor or the dead-letter producer failed", e);
        } finally {
            idle.complete(null);
        }
    }

    /** Completes once {@link #release()} has run. */
    public CompletionStage<Void> released() {
        return idle.minimalCompletionStage();
    }

    public ConsumerState state() {
        return state;
    }

    public @Nullable Throwable failure() {
        return failure;
    }

    @Override
    public void joined() {
        if (state == ConsumerState.STARTING) {
            state = ConsumerState.RUNNING;
        }
    }

    @Override
    public void failed(Throwable cause, boolean fatal) {
        failure = cause;
        if (fatal) {
            state = ConsumerState.FAILED;
        }
        try {
            onFailure.accept(cause);
        } catch (RuntimeException e) {
            log.warn("the onFailure listener threw", e);
        }
    }

    @Override
    public void ended() {
        if (state != ConsumerState.FAILED) {
            state = ConsumerState.STOPPED;
        }
    }
}
