package dev.idem.core;

import dev.idem.core.internal.LeaseRenewer;
import dev.idem.core.internal.Meters;
import dev.idem.core.internal.Tracing;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import dev.idem.core.spi.ClaimStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a batch's trip (decision 0007): finished keys are completed in one round trip that is
 * sent and not awaited, at the batch's close or on the way through a long batch; messages never
 * started are released; and a claim that meets a key whose completion from here is still on its
 * way waits for it instead of sending the message back busy.
 *
 * @param <T> payload type
 */
final class Completions<T> {

    private static final Logger LOG = LoggerFactory.getLogger(Completions.class);
    // How long opening a batch or closing the processor waits for the previous completion: a Redis
    // round trip, with margin.
    private static final Duration COMPLETION_WAIT = Duration.ofSeconds(5);
    // A batch running longer than this sends the completion of its finished keys on the way, not
    // only at its close: about as often as an adapter commits offsets.
    private static final Duration EAGER_COMPLETION = Duration.ofSeconds(1);

    private final ClaimStore claims;
    private final LeaseRenewer renewer;
    private final Meters meters;
    private final Tracing tracing;
    private final Ticker ticker;
    // Completions sent and not yet confirmed, each with its keys: a claim that finds one of these
    // keys busy waits for its completion and asks again, instead of every claim waiting.
    private final Map<CompletableFuture<Void>, List<IdempotencyKey>> completing = new ConcurrentHashMap<>();

    Completions(ClaimStore claims, LeaseRenewer renewer, Meters meters, Tracing tracing, Ticker ticker) {
        this.claims = claims;
        this.renewer = renewer;
        this.meters = meters;
        this.tracing = tracing;
        this.ticker = ticker;
    }

    /**
     * A key found busy because this processor's own completion of it is still on its way (a copy
     * in the next poll, or in another thread's batch) is claimed again once that completion landed,
     * so it is found done rather than sent back as busy.
     */
    void claimAgainAfterOwnCompletions(Map<IdempotencyKey, ClaimRequest> requests, Map<IdempotencyKey, Claim> answers,
                                       Function<List<ClaimRequest>, List<Claim>> claimAll) {
        Set<IdempotencyKey> busy = new HashSet<>();
        answers.values().forEach(claim -> {
            if (claim instanceof Claim.Busy) {
                busy.add(claim.key());
            }
        });
        if (busy.isEmpty()) {
            return;
        }
        List<ClaimRequest> again = new ArrayList<>();
        Set<CompletableFuture<Void>> awaited = new HashSet<>();
        completing.forEach((landed, keys) -> keys.stream().filter(busy::contains).forEach(key -> {
            again.add(requests.get(key));
            awaited.add(landed);
        }));
        if (again.isEmpty()) {
            return;
        }
        awaitAll(awaited);
        for (Claim claim : claimAll.apply(again)) {
            answers.put(claim.key(), claim);
        }
    }

    /** A key whose outcome needs a completion: with the batch's, or at once if the batch was abandoned. */
    void completeLater(Round<T> round, IdempotencyKey key) {
        List<IdempotencyKey> now;
        synchronized (round) {
            if (round.closed) {
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

    /** Completes, and waits for, what this batch has finished so far. */
    void completeWaiting(Round<T> round) {
        List<IdempotencyKey> now;
        synchronized (round) {
            now = round.takeWaiting();
        }
        if (!now.isEmpty()) {
            try {
                complete(round, now).get(COMPLETION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // Logged by complete; the keys stay claimed until their leases end.
            }
        }
    }

    /** A message stopped running; the last one out of an abandoned batch stops its renewal. */
    void stopped(Round<T> round) {
        boolean idle;
        synchronized (round) {
            round.running--;
            idle = round.closed && round.running == 0;
        }
        if (idle) {
            renewer.forget(round.owner);
        }
    }

    /** Closes the round: releases the claims of messages never started and completes the finished ones. */
    void closeRound(Round<T> round) {
        List<IdempotencyKey> done;
        List<IdempotencyKey> unstarted = new ArrayList<>();
        boolean idle;
        synchronized (round) {
            if (round.closed) {
                return;
            }
            round.closed = true;
            done = round.takeWaiting();
            round.claims.forEach((key, claim) -> {
                if (claim instanceof Claim.Claimed && !round.started.contains(key)) {
                    unstarted.add(key);
                }
            });
            idle = round.running == 0;
        }
        if (idle) {
            renewer.forget(round.owner);
        } else {
            // Messages still run (an abandon does not wait): keep renewing only theirs.
            unstarted.forEach(round.held::drop);
            done.forEach(round.held::drop);
        }
        try {
            if (!unstarted.isEmpty()) {
                claims.release(unstarted, round.owner);
            }
        } catch (ClaimStoreException e) {
            LOG.warn("could not release {} unstarted claim(s); their leases will expire", unstarted.size(), e);
        }
        if (!done.isEmpty()) {
            complete(round, done);
        }
    }

    /**
     * Sends the completion of finished keys, not awaited, and tries once more if it fails (a Redis
     * blip must not leave finished keys to lapse and run again).
     */
    private CompletableFuture<Set<IdempotencyKey>> complete(Round<T> round, List<IdempotencyKey> done) {
        done.forEach(round.held::drop);
        // Known as completing before it is sent, so a claim meeting these keys busy waits for it.
        CompletableFuture<Void> landed = new CompletableFuture<>();
        completing.put(landed, done);
        Runnable settled = () -> {
            completing.remove(landed);
            landed.complete(null);
        };
        Tracing.Step span = tracing.completion(round.claimSpan, done.size());
        CompletableFuture<Set<IdempotencyKey>> sent;
        try {
            sent = claims.completeAsync(done, round.owner)
                    .exceptionallyCompose(first -> claims.completeAsync(done, round.owner));
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        } catch (Error e) {
            settled.run();
            span.failed(e).close();
            throw e;
        }
        sent = sent.whenComplete((refused, error) -> {
            settled.run();
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

    /**
     * Waits, in all at most {@link #COMPLETION_WAIT}, for completions sent. Their failures were
     * logged where they happened; a late or failed completion only makes its keys look busy longer.
     */
    private static void awaitAll(Collection<CompletableFuture<Void>> completions) {
        long deadline = System.nanoTime() + COMPLETION_WAIT.toNanos();
        for (CompletableFuture<?> completion : completions) {
            try {
                completion.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                // See above.
            }
        }
    }

    /** Waits, in all at most a few seconds, for the completions still on their way. */
    void awaitSent() {
        awaitAll(List.copyOf(completing.keySet()));
    }
}
