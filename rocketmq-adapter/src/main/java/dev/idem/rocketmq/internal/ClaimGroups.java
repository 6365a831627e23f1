package dev.idem.rocketmq.internal;

import dev.idem.core.Batch;
import dev.idem.core.Envelope;
import dev.idem.core.IdempotentProcessor;
import dev.idem.core.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Claims the messages of concurrent listener calls together (decision 0048): a call arriving while
 * no claim is on its way claims at once; calls arriving while one is wait for it to end and are
 * claimed together, in one batch and one round trip. Each call processes its own messages of the
 * shared batch, on its own thread; the last call of a group to finish closes the batch, which sends
 * one completion for all. Not public API. Thread-safe.
 *
 * @param <T> payload type
 */
public final class ClaimGroups<T> implements StallingRun.Opener {

    /** The most messages claimed in one group (a call larger than this is claimed alone). */
    static final int MAX_MESSAGES = 512;

    private final IdempotentProcessor<T> processor;
    private final Object lock = new Object();
    private @Nullable Group<T> forming;   // guarded by lock: the group calls join until its claim starts
    private boolean claiming;   // guarded by lock: a group's claim is on its way

    public ClaimGroups(IdempotentProcessor<T> processor) {
        this.processor = Objects.requireNonNull(processor, "processor");
    }

    /** Joins {@code envelopes} to the next group's claim and waits for it; the share must be closed. */
    @Override
    public StallingRun.Run open(List<Envelope> envelopes) {
        Group<T> group;
        int offset;
        boolean first;
        synchronized (lock) {
            if (forming == null || !forming.fits(envelopes.size())) {
                forming = new Group<>();
            }
            group = forming;
            offset = group.envelopes.size();
            first = group.add(envelopes) == 1;
        }
        if (first) {
            claim(group);
        }
        return new Share<>(group, group.awaitOpened(first), offset, envelopes.size());
    }

    /** Run by a group's first call: waits for the claim on its way, closes the group and claims it. */
    private void claim(Group<T> group) {
        boolean interrupted = false;
        synchronized (lock) {
            while (claiming) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    // Bounded by the claim on its way (its store timeouts): the group's calls need this claim.
                    interrupted = true;
                }
            }
            claiming = true;
            if (forming == group) {
                forming = null;
            }
            group.sealed();
        }
        try {
            group.opened(processor.open(group.envelopes), null);
        } catch (RuntimeException | Error e) {
            group.opened(null, e);
        } finally {
            synchronized (lock) {
                claiming = false;
                lock.notifyAll();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The calls claimed together, and their batch once claimed. */
    private static final class Group<T> {
        final List<Envelope> envelopes = new ArrayList<>();
        final CountDownLatch claimed = new CountDownLatch(1);
        final AtomicInteger running = new AtomicInteger();
        int members;   // guarded by ClaimGroups.lock until sealed
        volatile @Nullable Batch<T> batch;
        volatile @Nullable Throwable failure;

        boolean fits(int size) {
            return envelopes.isEmpty() || envelopes.size() + size <= MAX_MESSAGES;
        }

        /** Adds a call's messages; returns how many calls the group has now. */
        int add(List<Envelope> more) {
            envelopes.addAll(more);
            return ++members;
        }

        void sealed() {
            running.set(members);
        }

        void opened(@Nullable Batch<T> batch, @Nullable Throwable failure) {
            this.batch = batch;
            this.failure = failure;
            claimed.countDown();
        }

        Batch<T> awaitOpened(boolean first) {
            boolean interrupted = false;
            while (true) {
                try {
                    claimed.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;   // the batch holds this call's messages: it must take its share
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (failure != null) {
                leave();
                if (first && failure instanceof RuntimeException e) {
                    throw e;
                }
                if (failure instanceof Error e) {
                    throw e;
                }
                // Each call of the group fails with its own exception, the claim's failure its cause.
                throw new IllegalStateException("the claim of " + members + " listener calls' " + envelopes.size()
                        + " messages, this call's among them, failed: " + failure.getMessage(), failure);
            }
            return Objects.requireNonNull(batch, "a claim that did not fail opened its batch");
        }

        void leave() {
            if (running.decrementAndGet() == 0 && batch != null) {
                batch.close();
            }
        }
    }

    /** One call's messages in its group's batch: indices from the call's first message. */
    private static final class Share<T> implements StallingRun.Run {
        private final Group<T> group;
        private final Batch<T> batch;
        private final int offset;
        private final int size;
        private final AtomicBoolean closed = new AtomicBoolean();

        Share(Group<T> group, Batch<T> batch, int offset, int size) {
            this.group = group;
            this.batch = batch;
            this.offset = offset;
            this.size = size;
        }

        @Override
        public Outcome process(int index) {
            Objects.checkIndex(index, size);
            return batch.process(offset + index);
        }

        /**
         * This call is done with its messages: those it never started are released now (their
         * redelivery must find them free while other calls run), and the group's last call closes
         * the batch, completing every finished key in one round trip.
         */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                try {
                    batch.release(offset, offset + size);
                } finally {
                    group.leave();
                }
            }
        }
    }
}
