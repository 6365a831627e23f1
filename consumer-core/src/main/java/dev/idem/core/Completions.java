package dev.idem.core;

import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Prepared;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a batch's trip (decision 0007): finished keys are completed in one round trip that is
 * sent and not awaited, at the batch's close or, in a batch still running, at the latest a second
 * after they finished (a timer looks at the open batches); messages never started are released
 * (one taken over from a crashed owner is left abandoned, for the next claim to count). What is on
 * its way is known to {@link HeldHere}, so a claim meeting those keys busy waits for it.
 *
 * @param <T> payload type
 */
final class Completions<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Completions.class);
    // A batch running longer than this sends the completion of its finished keys on the way, not
    // only at its close: about as often as an adapter commits offsets.
    private static final Duration EAGER_COMPLETION = Duration.ofSeconds(1);
    // The timer looks at the open batches this often, and sends what has waited this period less
    // than a second: a finished key waits at most a second for its completion, however long the rest
    // of its batch runs (a crash meanwhile can repeat it in Redis-only mode, so the promise names it).
    private static final Duration TIMER_PERIOD = Duration.ofMillis(200);
    private static final long DUE_NANOS = EAGER_COMPLETION.minus(TIMER_PERIOD).toNanos();
    // One thread for every processor's timer: a round only sends, it never waits for Redis.
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "idem-completion-timer");
        thread.setDaemon(true);
        return thread;
    });
    // A copy of a key whose message was given back unstarted: the redelivery of that message runs it.
    private static final Duration GIVEN_BACK_RETRY = Duration.ofMillis(100);

    private final ClaimStore claims;
    private final LeaseRenewer renewer;
    private final Meters meters;
    private final Tracing tracing;
    private final Ticker ticker;
    private final HeldHere held;
    private final ScheduledFuture<?> timer;
    // The processor is closing: what finishes from now on is completed at once, and renewal and the
    // timer stop once no handler of this processor runs (a handler may outlive its consumer's grace).
    private volatile boolean closing;
    // A timer round and the close's stop of the timer exclude each other.
    private final Object timerLock = new Object();
    private final AtomicBoolean stoppedForGood = new AtomicBoolean();

    Completions(ClaimStore claims, LeaseRenewer renewer, Meters meters, Tracing tracing,
                Ticker ticker, HeldHere held) {
        this.claims = claims;
        this.held = held;
        this.renewer = renewer;
        this.meters = meters;
        this.tracing = tracing;
        this.ticker = ticker;
        long period = TIMER_PERIOD.toMillis();
        this.timer = TIMER.scheduleAtFixedRate(this::sendDue, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * The timer's round: sends the completion of the finished keys of every open batch whose oldest
     * has waited long enough, so a key's completion never waits for the slowest message of its poll
     * or of a RocketMQ claim group (a hung handler, a 20-second one).
     */
    void sendDue() {
        synchronized (timerLock) {
            if (closing) {
                return;   // from now on what finishes is completed at once
            }
            try {
                long now = ticker.nanos();
                for (Round<?> open : held.openRounds()) {
                    @SuppressWarnings("unchecked")
                    Round<T> round = (Round<T>) open;
                    // Under the batch's read lock, as a message's run: its close (the write lock) never
                    // finds keys taken here and not yet known as completing.
                    if (!round.lock.readLock().tryLock()) {
                        continue;
                    }
                    try {
                        List<IdempotencyKey> due;
                        synchronized (round) {
                            if (round.closed || round.toComplete.isEmpty()
                                    || now - round.waitingSinceNanos < DUE_NANOS) {
                                continue;
                            }
                            due = round.takeWaiting();
                        }
                        complete(round, due);
                    } finally {
                        round.lock.readLock().unlock();
                    }
                }
            } catch (RuntimeException | Error e) {
                // A scheduled task that throws is never run again: nothing may escape a round.
                LOG.error("completion timer round failed; the next round runs as usual", e);
            }
        }
    }

    /**
     * The processor begins to close: from now on a finished key is completed at once, and the timer
     * stops, once a round of it in progress has sent what it took (so the close's wait for the
     * completions on their way sees it).
     */
    void beginClose() {
        closing = true;
        synchronized (timerLock) {
            timer.cancel(false);
        }
    }

    /**
     * The processor closes: batches with no handler running stop being renewed now; those with one
     * keep their leases renewed until it returns (in Redis-only mode a lease left to lapse under a
     * running handler would let another owner run the key at the same time); then the renewal stops.
     */
    void closeWhenIdle() {
        for (Round<?> open : held.openRounds()) {
            boolean idle;
            synchronized (open) {
                idle = open.running == 0;
            }
            if (idle) {
                renewer.forget(open.owner);
            }
        }
        stopIfIdle();
    }

    private void stopIfIdle() {
        for (Round<?> open : held.openRounds()) {
            synchronized (open) {
                if (open.running > 0) {
                    return;
                }
            }
        }
        if (stoppedForGood.compareAndSet(false, true)) {
            renewer.close();
        }
    }

    /** A key whose outcome needs a completion: with the batch's, or at once if the batch was abandoned. */
    void completeLater(Round<T> round, IdempotencyKey key) {
        List<IdempotencyKey> now;
        synchronized (round) {
            if (round.closed || closing) {
                now = List.of(key);
            } else {
                long at = ticker.nanos();
                if (round.toComplete.isEmpty()) {
                    round.waitingSinceNanos = at;
                }
                round.toComplete.add(key);
                if (at - round.waitingSinceNanos < EAGER_COMPLETION.toNanos()) {
                    return;
                }
                // A long batch (an adapter may commit offsets as records finish) completes what
                // finished so far, so a crash later in the batch cannot leave them to run again.
                now = round.takeWaiting();
            }
        }
        complete(round, now);
    }

    /**
     * For one of several callers of a batch, done with {@code items}: releases the claims of those
     * never started, so their redelivery finds them free while the rest of the batch runs (a copy of
     * one elsewhere in the batch is Busy from now on), and completes finished keys that have waited
     * a second or more. The batch stays open.
     */
    void releaseUnstarted(Round<T> round, List<Prepared<T>> items) {
        List<IdempotencyKey> unstarted = new ArrayList<>();
        List<IdempotencyKey> abandoned = new ArrayList<>();
        List<IdempotencyKey> due;
        synchronized (round) {
            if (round.closed) {
                return;
            }
            for (Prepared<T> item : items) {
                IdempotencyKey key = item.key();
                Claim claim = round.claims.get(key);
                boolean asking = round.askAgain.contains(key);
                // Settled as Busy unless it started: no copy runs it under the claim released here.
                if ((claim != null && claim.held() || asking)
                        && round.settled.putIfAbsent(key, new Outcome.Busy(key, GIVEN_BACK_RETRY)) == null) {
                    if (asking) {
                        round.askAgain.remove(key);   // not asked again: the batch no longer may hold it
                    } else {
                        unstarted.add(key);
                        if (claim instanceof Claim.Claimed claimed && claimed.takenOverFromCrash()) {
                            abandoned.add(key);
                        }
                    }
                }
            }
            due = !round.toComplete.isEmpty() && ticker.nanos() - round.waitingSinceNanos >= EAGER_COMPLETION.toNanos()
                    ? round.takeWaiting() : List.of();
        }
        if (!unstarted.isEmpty()) {
            unstarted.forEach(round.held::drop);
            release(round, unstarted, abandoned);
            // Not held here any more (after the release: a claim meeting one busy meanwhile waits for this
            // batch), and a claim that met one busy before asks again.
            unstarted.forEach(key -> round.claims.put(key, new Claim.Busy(key, Duration.ZERO)));
            held.released();
        }
        if (!due.isEmpty()) {
            complete(round, due);
        }
    }

    /** Sends, without waiting, the completion of what this batch has finished so far; null if nothing. */
    @Nullable CompletableFuture<?> sendWaiting(Round<T> round) {
        List<IdempotencyKey> now;
        synchronized (round) {
            now = round.takeWaiting();
        }
        return now.isEmpty() ? null : complete(round, now);
    }

    /** Completes, and waits for, what this batch has finished so far. */
    void completeWaiting(Round<T> round) {
        CompletableFuture<?> sent = sendWaiting(round);
        if (sent != null) {
            try {
                sent.get(HeldHere.COMPLETION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // Logged by complete; the keys stay claimed until their leases end.
            }
        }
    }

    /**
     * A message stopped running; the last one out of an abandoned batch, or of any batch once the
     * processor is closing, stops its renewal.
     */
    void stopped(Round<T> round) {
        boolean idle;
        synchronized (round) {
            round.running--;
            idle = (round.closed || closing) && round.running == 0;
        }
        if (idle) {
            renewer.forget(round.owner);
            if (closing) {
                stopIfIdle();
            }
        }
    }

    /** Closes the round: releases the claims of messages never started and completes the finished ones. */
    void closeRound(Round<T> round) {
        List<IdempotencyKey> done;
        List<IdempotencyKey> unstarted = new ArrayList<>();
        List<IdempotencyKey> abandoned = new ArrayList<>();
        boolean idle;
        synchronized (round) {
            if (round.closed) {
                return;
            }
            round.closed = true;
            done = round.takeWaiting();
            round.claims.forEach((key, claim) -> {
                // A held compensation never started is given up too: the next owner takes it at once.
                if (claim.held() && !round.started.contains(key)) {
                    unstarted.add(key);
                    if (claim instanceof Claim.Claimed claimed && claimed.takenOverFromCrash()) {
                        abandoned.add(key);
                    }
                }
            });
            idle = round.running == 0;
        }
        CompletableFuture<?> sent = null;
        try {
            if (idle) {
                renewer.forget(round.owner);
            } else {
                // Messages still run (an abandon does not wait): keep renewing only theirs.
                unstarted.forEach(round.held::drop);
                done.forEach(round.held::drop);
            }
            release(round, unstarted, abandoned);
            // Known as completing before it stops being known as open, so a claim meeting its keys waits.
            sent = done.isEmpty() ? null : complete(round, done);
        } finally {
            held.closed(round.opening, sent);
        }
    }

    /**
     * Releases claims whose message never ran. One taken over from a crashed owner is left abandoned,
     * for the next claim to take over and count (decision 0003): a poll claimed ahead and given up
     * must not erase a crash (a message crashing every consumer would never reach its dead letter),
     * nor count one for a run that never started.
     */
    private void release(Round<T> round, List<IdempotencyKey> unstarted, List<IdempotencyKey> abandoned) {
        if (unstarted.isEmpty()) {
            return;
        }
        try {
            // A failed call leaves the claims to lapse: the next owner takes them over and counts, once.
            claims.release(unstarted, Set.copyOf(abandoned), round.owner);
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {} unstarted claim(s); their leases will expire", unstarted.size(), e);
        } catch (RuntimeException e) {
            // A store's defect (it should throw ClaimStoreException): the batch still closes, or a
            // consumer waiting for its close would stop for good while it reports running.
            LOG.error("the claim store failed releasing {} unstarted claim(s); their leases will expire",
                    unstarted.size(), e);
        }
    }

    /**
     * Sends the completion of finished keys, not awaited, and tries once more if it fails (a Redis
     * blip must not leave finished keys to lapse and run again).
     */
    private CompletableFuture<Set<IdempotencyKey>> complete(Round<T> round, List<IdempotencyKey> done) {
        done.forEach(round.held::drop);
        // Known as completing before it is sent, so a claim meeting these keys busy waits for it.
        Consumer<@Nullable Set<IdempotencyKey>> landed = held.completing(done);
        Tracing.Step span = tracing.completion(round.claimSpan, done.size());
        CompletableFuture<Set<IdempotencyKey>> sent;
        try {
            sent = claims.completeAsync(done, round.owner)
                    .exceptionallyCompose(first -> claims.completeAsync(done, round.owner));
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        } catch (Error e) {
            landed.accept(null);
            span.failed(e).close();
            throw e;
        }
        sent = sent.whenComplete((refused, error) -> {
            landed.accept(error == null ? refused : null);
            if (error != null) {
                span.failed(error);
            } else if (!refused.isEmpty()) {
                span.attribute("idem.refused", refused.size());
            }
            span.close();
            if (error != null) {
                LOG.warn("could not record {} completion(s) after two tries; their leases will expire and "
                        + "only a business check will recognise the effects", done.size(), error);
            } else if (!refused.isEmpty()) {
                meters.leaseLost(refused.size());
                LOG.warn("{} completion(s) refused because their claims passed to another owner, e.g. {}",
                        refused.size(), refused.iterator().next());
            }
        });
        return sent;
    }


}
