package dev.idem.rocketmq.internal;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Counts the listener calls that are running, refuses new ones once closing, and lets a stalled
 * call wait in a way that closing cuts short. Not public API. Thread-safe.
 */
public final class ListenerGate {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private int running;
    private boolean closing;
    private boolean released;

    /** Enters a listener call; false once closing, and then the call must not process anything. */
    public boolean enter() {
        lock.lock();
        try {
            if (closing) {
                return false;
            }
            running++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Leaves a call that {@link #enter()} let in. */
    public void exit() {
        lock.lock();
        try {
            running--;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits up to {@code wait} for nothing (a stall's backoff), returning early once closing.
     *
     * @return false if the gate is closing: stop stalling and answer the broker now
     */
    public boolean pause(Duration wait) {
        long nanos = wait.toNanos();
        lock.lock();
        try {
            while (!closing && nanos > 0) {
                nanos = changed.awaitNanos(nanos);
            }
            return !closing;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Refuses new calls and wakes stalled ones. */
    public void close() {
        lock.lock();
        try {
            closing = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits up to {@code grace} for the running calls to finish.
     *
     * @return how many are still running
     */
    public int awaitIdle(Duration grace) {
        long nanos = grace.toNanos();
        lock.lock();
        try {
            while (running > 0 && nanos > 0) {
                nanos = changed.awaitNanos(nanos);
            }
            return running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return running;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Holds a refused call until {@link #release()} (or {@code limit}): its answer is only read by
     * the client if its queue is still live, so it waits until the queues are dropped.
     */
    public void holdRefused(Duration limit) {
        long nanos = limit.toNanos();
        lock.lock();
        try {
            while (!released && nanos > 0) {
                nanos = changed.awaitNanos(nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Lets held refused calls return. */
    public void release() {
        lock.lock();
        try {
            released = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
