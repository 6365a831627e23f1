package dev.idem.core;

import org.jspecify.annotations.Nullable;
import dev.idem.core.spi.Claim;
import dev.idem.core.spi.ClaimRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What one processor holds in the claim store: its batches from their claim to their close
 * ({@link Opening}) and its completions on their way. A claim that finds one of those keys busy
 * does not send its message back busy for a lease: it claims again once the holder here settled
 * (decisions 0007, 0047), or, when a completion here has confirmed the key done meanwhile, is
 * answered done without asking the store again (decision 0059). Thread-safe.
 */
final class HeldHere {

    // How long a claim, or the processor's close, waits for what it waits for here: a batch's run or
    // a Redis round trip, with margin.
    static final Duration COMPLETION_WAIT = Duration.ofSeconds(5);
    // How soon a key held by a batch of this processor that began later is tried again.
    private static final Duration HELD_BY_LATER_BATCH = Duration.ofMillis(100);

    // Completions sent and not yet confirmed, each with its keys; each completes with the keys the
    // store refused (null if it failed).
    private final Map<CompletableFuture<Set<IdempotencyKey>>, List<IdempotencyKey>> completing = new ConcurrentHashMap<>();
    // Keys batches here met busy at their claims and ask again when their messages run, with the
    // batches watching each: a completion here that confirms one of them done tells those batches,
    // and their copies are answered done from it. A batch hears only of completions that landed
    // after it began watching.
    private final Map<IdempotencyKey, Set<Opening>> watched = new ConcurrentHashMap<>();
    // This processor's batches being claimed or open, by the order they began.
    private final Map<Long, Opening> openings = new ConcurrentHashMap<>();
    private final AtomicLong openingOrder = new AtomicLong();
    // Batches and completions settled so far: a claim that raced one of them asks again.
    private final AtomicLong settlements = new AtomicLong();

    /** A batch begins: its claim is about to be sent for these keys. */
    Opening opening(Set<IdempotencyKey> keys) {
        Opening opening = new Opening(openingOrder.incrementAndGet(), keys);
        openings.put(opening.order, opening);
        return opening;
    }

    /** A batch that could not be opened settles at once. */
    void notOpened(Opening opening) {
        openings.remove(opening.order);
        unwatch(opening);
        settle(opening);
    }

    /** Keys a batch held were released while it stays open: a claim that met them busy asks again. */
    void released() {
        settlements.incrementAndGet();
    }

    /** How many of this processor's batches, completions and releases have settled so far: read before a claim. */
    long settlements() {
        return settlements.get();
    }

    /**
     * At a batch's claim: a key found busy because this processor's own completion of it is still
     * on its way is claimed again once that completion landed, so a copy is found done (decision
     * 0007); so is one whose holder here settled while the claim was answered. A key found busy
     * because another batch of this processor holds it (the poll before, claimed ahead; a concurrent
     * call) is not waited for here, where the wait could hold the very thread that batch needs: it is
     * returned, to be asked again when its message runs ({@link #askAgain}).
     *
     * @param seen {@link #settlements()} before the claim was sent
     * @return keys still busy that another batch of this processor may hold
     */
    Set<IdempotencyKey> claimAgainAfterOwnCompletions(Opening self, long seen, Map<IdempotencyKey, ClaimRequest> requests,
                                                      Map<IdempotencyKey, Claim> answers,
                                                      Function<List<ClaimRequest>, List<Claim>> claimAll) {
        Set<IdempotencyKey> busy = busy(answers);
        if (busy.isEmpty()) {
            return Set.of();
        }
        // Openings first: a batch closing is known as completing before it stops being known as open.
        Set<IdempotencyKey> heldHere = new HashSet<>();
        openings.values().forEach(other -> busy.forEach(key -> {
            if (other != self && other.mayHold(key)) {
                heldHere.add(key);
            }
        }));
        Set<IdempotencyKey> again = new HashSet<>();
        Map<CompletableFuture<Set<IdempotencyKey>>, List<IdempotencyKey>> awaited = new HashMap<>();
        completing.forEach((landed, keys) -> keys.stream().filter(busy::contains).forEach(key -> {
            again.add(key);
            awaited.put(landed, keys);
        }));
        if (settlements.get() != seen) {
            // Something here settled while the claim was on its way: its busy answers may be stale.
            busy.stream().filter(key -> !heldHere.contains(key)).forEach(again::add);
        }
        if (!again.isEmpty()) {
            awaitAll(awaited.keySet());
            // A key a completion here confirmed done is answered from it; the rest are asked again.
            List<ClaimRequest> ask = new ArrayList<>(again.size());
            Set<IdempotencyKey> confirmed = confirmedDone(again, awaited);
            for (IdempotencyKey key : again) {
                if (confirmed.contains(key)) {
                    answers.put(key, new Claim.Done(key));
                } else {
                    ask.add(requests.get(key));
                }
            }
            if (!ask.isEmpty()) {
                for (Claim claim : claimAll.apply(ask)) {
                    answers.put(claim.key(), claim);
                }
            }
        }
        heldHere.retainAll(busy(answers));
        watch(self, heldHere);
        return heldHere;
    }

    /**
     * When its message runs, a key that was busy at the claim because another batch of this
     * processor held it: claimed again, once a batch that began earlier and may hold it settled
     * (closed, its completion landed; in a poll loop it has ended by now) and a completion of it on
     * its way landed, so a copy is found done. Waits at most a few seconds, then it stays busy.
     * Held by a batch that began later (its claim overtook this one's), it is busy only briefly:
     * the later batch gives the key back unrun if this one's message is sent back, or finishes it.
     */
    Claim askAgain(Opening self, ClaimRequest request, Function<List<ClaimRequest>, List<Claim>> claimAll) {
        IdempotencyKey key = request.key();
        if (self.confirmed.contains(key)) {
            return new Claim.Done(key);
        }
        long seen = settlements.get();
        Claim claim = claimAll.apply(List.of(request)).get(0);
        if (!(claim instanceof Claim.Busy)) {
            return claim;
        }
        Set<CompletableFuture<?>> awaited = new HashSet<>();
        boolean later = false;
        for (Opening other : openings.values()) {
            if (other != self && other.mayHold(key)) {
                if (other.order < self.order) {
                    awaited.add(other.settled);
                } else {
                    later = true;
                }
            }
        }
        completing.forEach((landed, keys) -> {
            if (keys.contains(key)) {
                awaited.add(landed);
            }
        });
        if (!awaited.isEmpty() || settlements.get() != seen) {
            awaitAll(awaited);
            claim = self.confirmed.contains(key) ? new Claim.Done(key) : claimAll.apply(List.of(request)).get(0);
        }
        return claim instanceof Claim.Busy && later ? new Claim.Busy(key, HELD_BY_LATER_BATCH) : claim;
    }

    /** Those of {@code keys} that one of these completions here, landed, confirmed done. */
    private static Set<IdempotencyKey> confirmedDone(Set<IdempotencyKey> keys,
                                                     Map<CompletableFuture<Set<IdempotencyKey>>, List<IdempotencyKey>> landed) {
        Set<IdempotencyKey> confirmed = new HashSet<>();
        landed.forEach((completion, completed) -> {
            Set<IdempotencyKey> refused = completion.getNow(null);
            if (refused != null) {
                for (IdempotencyKey key : completed) {
                    if (keys.contains(key) && !refused.contains(key)) {
                        confirmed.add(key);
                    }
                }
            }
        });
        return confirmed;
    }

    /** The batch asks these keys again when their messages run: a completion here that confirms one done tells it. */
    private void watch(Opening self, Set<IdempotencyKey> keys) {
        if (keys.isEmpty()) {
            return;
        }
        // Known before the map holds it: whatever is added is removed at the batch's close.
        self.watching = Set.copyOf(keys);
        for (IdempotencyKey key : self.watching) {
            watched.compute(key, (k, openings) -> {
                Set<Opening> now = openings != null ? openings : ConcurrentHashMap.newKeySet();
                now.add(self);
                return now;
            });
        }
    }

    /** The batch closed: it asks none of its keys again. */
    private void unwatch(Opening opening) {
        for (IdempotencyKey key : opening.watching) {
            watched.computeIfPresent(key, (k, openings) -> openings.remove(opening) && openings.isEmpty() ? null : openings);
        }
        opening.watching = Set.of();
    }

    private void settle(Opening opening) {
        settlements.incrementAndGet();
        opening.settled.complete(null);
    }

    private static Set<IdempotencyKey> busy(Map<IdempotencyKey, Claim> answers) {
        Set<IdempotencyKey> busy = new HashSet<>();
        answers.values().forEach(claim -> {
            if (claim instanceof Claim.Busy) {
                busy.add(claim.key());
            }
        });
        return busy;
    }

    /** The batches whose claims answered and that have not closed. */
    List<Round<?>> openRounds() {
        List<Round<?>> open = new ArrayList<>();
        for (Opening opening : openings.values()) {
            Round<?> round = opening.round;
            if (round != null) {
                open.add(round);
            }
        }
        return open;
    }

    /** The batch's claims answered: from now on it is known to hold only the keys it claimed. */
    void opened(Opening opening, Round<?> round) {
        opening.round = round;
    }

    /**
     * A batch closed: it stops being known as open once its completion (null when none) is known as
     * on its way, and settles when that landed.
     */
    void closed(Opening opening, @Nullable CompletableFuture<?> completion) {
        openings.remove(opening.order);
        unwatch(opening);
        if (completion != null) {
            completion.whenComplete((refused, error) -> settle(opening));
        } else {
            settle(opening);
        }
    }

    /**
     * A completion of these keys is about to be sent: known as on its way from now on.
     *
     * @return to call once it landed, with the keys the store refused, or null if it failed
     */
    Consumer<@Nullable Set<IdempotencyKey>> completing(List<IdempotencyKey> keys) {
        CompletableFuture<Set<IdempotencyKey>> landed = new CompletableFuture<>();
        completing.put(landed, keys);
        return refused -> {
            // Said before the landing wakes anyone: a copy woken by it finds its key confirmed.
            if (refused != null && !watched.isEmpty()) {
                for (IdempotencyKey key : keys) {
                    Set<Opening> watching = watched.get(key);
                    if (watching != null && !refused.contains(key)) {
                        watching.forEach(opening -> opening.confirmed.add(key));
                    }
                }
            }
            settlements.incrementAndGet();
            completing.remove(landed);
            landed.complete(refused);
        };
    }

    /** Waits, in all at most a few seconds, for the completions still on their way. */
    void awaitSent() {
        awaitAll(List.copyOf(completing.keySet()));
    }

    /**
     * Waits, in all at most {@link #COMPLETION_WAIT}, for batches and completions here. Failures were
     * logged where they happened; a late or failed completion only makes its keys look busy longer.
     */
    private static void awaitAll(Collection<? extends CompletableFuture<?>> awaited) {
        long deadline = System.nanoTime() + COMPLETION_WAIT.toNanos();
        for (CompletableFuture<?> one : awaited) {
            try {
                one.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                // See above.
            }
        }
    }
}
