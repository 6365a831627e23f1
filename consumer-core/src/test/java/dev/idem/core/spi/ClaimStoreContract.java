package dev.idem.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ClaimStore} (and its {@link ClaimAdmin} side) must have. Subclasses
 * supply the store; the same tests run against the in-memory store, real Redis and a Redis Cluster.
 */
public abstract class ClaimStoreContract {

    /** Done and dead keys are remembered this long in these tests. */
    protected static final Duration WINDOW = Duration.ofSeconds(1);
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration SHORT_LEASE = Duration.ofMillis(150);

    private ClaimStore store;
    private ClaimAdmin admin;
    private String group;

    /** A store whose done and dead records live {@code doneWindow}; it must also be a {@link ClaimAdmin}. */
    protected abstract ClaimStore newStore(Duration doneWindow);

    /**
     * Makes the store lose {@code key}'s record as a failover or a restart would (not as an operator's
     * reset, which the store remembers for a while): every record the store keeps for it.
     */
    protected abstract void loseRecord(ClaimAdmin admin, IdempotencyKey key);

    @BeforeEach
    void freshStoreAndKeys() {
        store = newStore(WINDOW);
        admin = (ClaimAdmin) store;
        group = "g-" + UUID.randomUUID();
    }

    private IdempotencyKey key(String value) {
        return new IdempotencyKey(group, "orders", value);
    }

    private Claim claim(String value, String owner, Duration lease) {
        return store.claim(List.of(new ClaimRequest(key(value), 0)), owner, lease).get(0);
    }

    private Claim.Claimed claimed(String value, String owner) {
        Claim claim = claim(value, owner, LEASE);
        assertThat(claim).isInstanceOf(Claim.Claimed.class);
        return (Claim.Claimed) claim;
    }

    private void awaitTakeover(String value, String owner) {
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim(value, owner, LEASE) instanceof Claim.Claimed);
    }

    @Test
    void freshKeyIsClaimedAsFirstAttempt() {
        Claim.Claimed claim = claimed("k", "a");

        assertThat(claim.attempt()).isEqualTo(1);
        assertThat(claim.fresh()).isTrue();
        assertThat(claim.abandoned()).isFalse();
        assertThat(admin.inspect(key("k")).orElseThrow().state()).isEqualTo(ClaimRecord.State.CLAIMED);
    }

    @Test
    void anotherOwnerIsBusyWhileTheLeaseLives() {
        claimed("k", "a");

        Claim second = claim("k", "b", LEASE);

        assertThat(second).isInstanceOf(Claim.Busy.class);
        assertThat(((Claim.Busy) second).remaining()).isPositive().isLessThanOrEqualTo(LEASE);
    }

    @Test
    void theSameOwnerClaimingAgainKeepsItsClaimAndFence() {
        Claim.Claimed first = claimed("k", "a");

        Claim.Claimed again = claimed("k", "a");

        assertThat(again.fence()).isEqualTo(first.fence());
        assertThat(again.attempt()).isEqualTo(first.attempt());
    }

    @Test
    void aClaimRetriedByItsOwnerBeforeItRunsKeepsTheSafeReading() {
        // The first reply was lost (a client timeout): it may have said "abandoned" (count before
        // running) or "fresh" (one real run before any dead letter). The retry says both.
        claimed("k", "a");

        Claim.Claimed retried = claimed("k", "a");

        assertThat(retried.abandoned()).isTrue();
        assertThat(retried.fresh()).isTrue();
        assertThat(store.count(key("k"), "a", LEASE)).isTrue();
        Claim.Claimed afterCount = claimed("k", "a");
        assertThat(afterCount.abandoned()).isFalse();
        assertThat(afterCount.attempt()).isEqualTo(retried.attempt());
    }

    @Test
    void anExpiredLeaseCanBeTakenOver() {
        claim("k", "a", SHORT_LEASE);

        awaitTakeover("k", "b");

        assertThat(admin.inspect(key("k")).orElseThrow().owner()).contains("b");
    }

    @Test
    void aTakeoverGivenUpUnrunIsLeftAbandonedForTheNextClaimToCount() {
        // Given a claim of "a", whose owner died, taken over by "b" and given up unrun
        claim("k", "a", SHORT_LEASE);
        awaitTakeover("k", "b");
        claimed("other", "b");

        // When "b" releases both, "k" as a crashed owner's takeover
        store.release(List.of(key("k"), key("other")), Set.of(key("k")), "b");

        // Then nothing is counted (a's run may never have started), "k" is free at once and taken over
        // by the next claim, which counts its own run before it starts; "other" is plainly released
        assertThat(admin.inspect(key("k")).orElseThrow().attempts()).isZero();
        assertThat(admin.inspect(key("other")).orElseThrow().attempts()).isZero();
        Claim.Claimed next = claimed("k", "c");
        assertThat(next.abandoned()).as("still a takeover").isTrue();
        assertThat(next.fresh()).isFalse();
        assertThat(next.attempt()).isEqualTo(1);
        assertThat(store.count(key("k"), "c", LEASE)).isTrue();
        assertThat(admin.inspect(key("k")).orElseThrow().attempts()).isEqualTo(1);
        Claim.Claimed other = claimed("other", "c");
        assertThat(other.abandoned()).as("released, not abandoned").isFalse();
        assertThat(other.attempt()).isEqualTo(1);
    }

    @Test
    void aTakeoverGivenUpUnrunIsNoLongerItsOwners() {
        // Given a takeover by "b", given up unrun
        claim("k", "a", SHORT_LEASE);
        awaitTakeover("k", "b");
        store.release(List.of(key("k")), Set.of(key("k")), "b");

        // Then "b" can neither renew, count nor complete it
        assertThat(store.renew(List.of(key("k")), "b", LEASE)).containsExactly(key("k"));
        assertThat(store.count(key("k"), "b", LEASE)).isFalse();
        assertThat(store.complete(List.of(key("k")), "b")).containsExactly(key("k"));
    }

    @Test
    void takingOverAnAbandonedClaimReportsItAsAbandoned() {
        claim("k", "a", SHORT_LEASE);

        Claim takeover = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "b", LEASE), c -> c instanceof Claim.Claimed);

        assertThat(((Claim.Claimed) takeover).abandoned()).isTrue();
    }

    @Test
    void keysWhoseSeparatorsFallElsewhereAreDifferentKeys() {
        // group "g", topic "a", key "b:c" and group "g:a", topic "b", key "c" read alike when joined with ':'
        // (a done window longer than the test, so the dead records outlive it on a slow machine)
        store = newStore(Duration.ofMinutes(1));
        admin = (ClaimAdmin) store;
        IdempotencyKey first = new IdempotencyKey(group, "a", "b:c");
        IdempotencyKey second = new IdempotencyKey(group + ":a", "b", "c");
        assertThat(store.claim(List.of(new ClaimRequest(first, 0)), "a", LEASE).get(0)).isInstanceOf(Claim.Claimed.class);
        store.doom(first, "a", "attempts exhausted", "");
        store.deadLetter(first, "a", LEASE);

        assertThat(store.claim(List.of(new ClaimRequest(second, 0)), "b", LEASE).get(0)).isInstanceOf(Claim.Claimed.class);
        store.doom(second, "b", "attempts exhausted", "");
        store.deadLetter(second, "b", LEASE);
        assertThat(admin.deadKeys(group, 10)).extracting(ClaimAdmin.KeyRecord::key).containsExactly(first);
        assertThat(admin.deadKeys(group + ":a", 10)).extracting(ClaimAdmin.KeyRecord::key).containsExactly(second);
    }

    @Test
    void aStaleOwnerCanNeitherReleaseNorCompleteNorFailNorDeadLetter() {
        claim("k", "a", SHORT_LEASE);
        awaitTakeover("k", "b");

        assertThat(store.complete(List.of(key("k")), "a")).containsExactly(key("k"));
        assertThat(store.fail(key("k"), "a", "boom")).isEmpty();
        assertThat(store.doom(key("k"), "a", "attempts exhausted", "boom")).isFalse();
        assertThat(store.postpone(key("k"), "a", LEASE)).isFalse();
        assertThat(store.deadLetter(key("k"), "a", LEASE)).isFalse();
        assertThat(store.count(key("k"), "a", LEASE)).isFalse();
        assertThat(store.renew(List.of(key("k")), "a", LEASE)).containsExactly(key("k"));
        store.release(List.of(key("k")), "a");

        ClaimRecord record = admin.inspect(key("k")).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.CLAIMED);
        assertThat(record.owner()).contains("b");
        assertThat(record.failures()).isZero();
    }

    @Test
    void aReleasedClaimCanBeReclaimedByAnotherOwner() {
        claimed("k", "a");
        store.release(List.of(key("k")), "a");

        Claim.Claimed claim = claimed("k", "b");

        assertThat(claim.abandoned()).isFalse();
    }

    @Test
    void aFailureIsCountedAndFreesTheKeyForTheNextAttempt() {
        claimed("k", "a");

        FailureCount count = store.fail(key("k"), "a", "java.io.IOException: disk").orElseThrow();
        Claim.Claimed next = claimed("k", "b");

        assertThat(count.attempts()).isEqualTo(1);
        assertThat(count.failures()).isEqualTo(1);
        assertThat(next.attempt()).isEqualTo(2);
        assertThat(next.failures()).isEqualTo(1);
        assertThat(next.firstFailureAt()).contains(count.firstFailureAt());
        assertThat(admin.inspect(key("k")).orElseThrow().lastError()).contains("java.io.IOException: disk");
    }

    /**
     * A key decided for the dead letter keeps the fence of the claim that decided it, whoever claims
     * it next (a publish that failed and was postponed): the fence names the dead-lettering, and the
     * compensation id with it. No handler runs under those later claims.
     */
    @Test
    void aKeyDecidedForTheDeadLetterKeepsItsFenceAcrossClaims() {
        long fence = claimed("k", "a").fence();
        assertThat(store.doom(key("k"), "a", "attempts exhausted", "boom")).isTrue();
        assertThat(store.postpone(key("k"), "a", Duration.ZERO)).isTrue();

        Claim.Claimed again = claimed("k", "b");

        assertThat(again.deadLetterReason()).contains("attempts exhausted");
        assertThat(again.fence()).isEqualTo(fence);
    }

    @Test
    void fencesIncreaseAtEveryClaim() {
        List<Long> fences = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            fences.add(claimed("k", "owner-" + i).fence());
            store.fail(key("k"), "owner-" + i, "boom");
        }

        assertThat(fences).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aDoneKeyAnswersDoneUntilItsWindowEnds() {
        claimed("k", "a");

        assertThat(store.complete(List.of(key("k")), "a")).isEmpty();

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Done.class);
        assertThat(admin.inspect(key("k")).orElseThrow().state()).isEqualTo(ClaimRecord.State.DONE);
        await().atMost(Duration.ofSeconds(5)).until(() -> claim("k", "c", LEASE) instanceof Claim.Claimed);
    }

    @Test
    void aKeyCompletedAsynchronouslyAnswersDoneUntilItsWindowEnds() throws Exception {
        claimed("k", "a");

        assertThat(store.completeAsync(List.of(key("k")), "a").get(5, TimeUnit.SECONDS)).isEmpty();

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Done.class);
        assertThat(admin.inspect(key("k")).orElseThrow().state()).isEqualTo(ClaimRecord.State.DONE);
        await().atMost(Duration.ofSeconds(5)).until(() -> claim("k", "c", LEASE) instanceof Claim.Claimed);
    }

    @Test
    void anAsynchronousCompletionByAStaleOwnerIsRefusedAndTheNewOwnerKeepsTheKey() throws Exception {
        claim("k", "a", SHORT_LEASE);
        awaitTakeover("k", "b");

        assertThat(store.completeAsync(List.of(key("k")), "a").get(5, TimeUnit.SECONDS)).containsExactly(key("k"));

        ClaimRecord record = admin.inspect(key("k")).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.CLAIMED);
        assertThat(record.owner()).contains("b");
        assertThat(claim("k", "c", LEASE)).isInstanceOf(Claim.Busy.class);
        assertThat(store.completeAsync(List.of(key("k")), "b").get(5, TimeUnit.SECONDS)).isEmpty();
        assertThat(claim("k", "c", LEASE)).isInstanceOf(Claim.Done.class);
    }

    @Test
    void anAsynchronousCompletionOfABatchRefusesExactlyTheKeysAnotherOwnerHoldsOrThatAreDead() throws Exception {
        // Given keys held by "a", held by another owner, and dead-lettered by "a"
        claimed("mine", "a");
        claimed("theirs", "b");
        claimed("dead", "a");
        store.doom(key("dead"), "a", "attempts exhausted", "boom");
        store.deadLetter(key("dead"), "a", LEASE);
        List<IdempotencyKey> keys = List.of(key("mine"), key("theirs"), key("dead"));

        // When "a" completes them all in one call
        Set<IdempotencyKey> refused = store.completeAsync(keys, "a").get(5, TimeUnit.SECONDS);

        // Then only its own claim is done; the others are refused and left as they were
        assertThat(refused).containsExactlyInAnyOrder(key("theirs"), key("dead"));
        assertThat(admin.inspect(key("mine")).orElseThrow().state()).isEqualTo(ClaimRecord.State.DONE);
        assertThat(admin.inspect(key("theirs")).orElseThrow().owner()).contains("b");
        assertThat(admin.inspect(key("dead")).orElseThrow().state()).isEqualTo(ClaimRecord.State.DEAD);
        assertThat(claim("theirs", "c", LEASE)).isInstanceOf(Claim.Busy.class);
    }

    @Test
    void aCompletionOfAKeyWhoseRecordWasLostUnderItsOwnerWritesItDone() throws Exception {
        // Given a key "a" claimed and applied, whose record the store then lost (a failover, a restart)
        claimed("lost", "a");
        claimed("kept", "a");
        loseRecord(admin, key("lost"));

        // When "a" completes both
        Set<IdempotencyKey> refused = store.completeAsync(List.of(key("lost"), key("kept")), "a").get(5, TimeUnit.SECONDS);

        // Then both are done: a copy arriving later is not run again
        assertThat(refused).isEmpty();
        assertThat(claim("lost", "b", LEASE)).isInstanceOf(Claim.Done.class);
        assertThat(claim("kept", "b", LEASE)).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aCompletionOnItsWayWhenAnOperatorResetTheKeyIsRefusedAndTheNextCopyRuns() throws Exception {
        // Given a run of "a" whose completion is still on its way when an operator resets the key
        claimed("k", "a");
        admin.reset(key("k"));

        // When the completion arrives (a store completing a whole batch in one write need not notice
        // the reset key, so whether it reports it refused is left open)
        store.completeAsync(List.of(key("k")), "a").get(5, TimeUnit.SECONDS);

        // Then it does not undo the reset: the next copy runs, as fresh
        assertThat(admin.inspect(key("k"))).isEmpty();
        assertThat(claimed("k", "b").fresh()).isTrue();
        assertThat(store.complete(List.of(key("k")), "b")).isEmpty();
        assertThat(claim("k", "c", LEASE)).isInstanceOf(Claim.Done.class);
    }

    @Test
    void anAsynchronousCompletionSentAgainAfterItWasAppliedIsNotRefused() throws Exception {
        // Given a completion that was applied but whose reply the caller never saw
        claimed("k", "a");
        store.completeAsync(List.of(key("k")), "a").get(5, TimeUnit.SECONDS);

        // When the caller sends it again
        Set<IdempotencyKey> refused = store.completeAsync(List.of(key("k")), "a").get(5, TimeUnit.SECONDS);

        // Then it is not reported as a lost lease, and the key stays done
        assertThat(refused).isEmpty();
        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Done.class);
    }

    @Test
    void aDeadKeyAnswersDeadUntilItsWindowEndsAndKeepsItsCompensationOutcome() {
        claimed("k", "a");

        assertThat(store.doom(key("k"), "a", "attempts exhausted", "java.io.IOException: boom")).isTrue();
        assertThat(store.deadLetter(key("k"), "a", LEASE)).isTrue();
        assertThat(store.recordCompensation(key("k"), "a", CompensationOutcome.OK)).isTrue();

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Dead.class);
        ClaimRecord record = admin.inspect(key("k")).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.DEAD);
        assertThat(record.compensation()).contains(CompensationOutcome.OK);
        assertThat(record.attempts()).isEqualTo(1);
        assertThat(record.deadLetterReason()).contains("attempts exhausted");
        assertThat(store.recordCompensation(key("k"), "a", CompensationOutcome.OK)).isFalse();
        await().atMost(Duration.ofSeconds(5)).until(() -> claim("k", "c", LEASE) instanceof Claim.Claimed);
    }

    @Test
    void aBatchClaimAnswersAsSingleClaimsWould() {
        // Given keys in every state: fresh, busy, done, dead, failed
        claimed("busy", "other");
        claimed("done", "other");
        store.complete(List.of(key("done")), "other");
        claimed("dead", "other");
        store.doom(key("dead"), "other", "non-retryable failure", "");
        store.deadLetter(key("dead"), "other", LEASE);
        store.recordCompensation(key("dead"), "other", CompensationOutcome.OK);
        claimed("failed", "other");
        store.fail(key("failed"), "other", "boom");
        List<String> values = List.of("fresh", "busy", "done", "dead", "failed");

        // When they are claimed in one batch
        List<Claim> batch = store.claim(values.stream().map(v -> new ClaimRequest(key(v), 0)).toList(),
                "me", LEASE);

        // Then each answer is the one a single claim gives
        assertThat(batch).extracting(Claim::key).containsExactlyElementsOf(values.stream().map(this::key).toList());
        assertThat(batch.get(0)).isInstanceOf(Claim.Claimed.class);
        assertThat(batch.get(1)).isInstanceOf(Claim.Busy.class);
        assertThat(batch.get(2)).isInstanceOf(Claim.Done.class);
        assertThat(batch.get(3)).isInstanceOf(Claim.Dead.class);
        assertThat(((Claim.Claimed) batch.get(4)).attempt()).isEqualTo(2);
    }

    @Test
    void aLargeBatchClaimsEveryKeyOnceInOrder() {
        List<ClaimRequest> requests = IntStream.range(0, 500).mapToObj(i -> new ClaimRequest(key("k" + i), 0)).toList();

        List<Claim> claims = store.claim(requests, "me", LEASE);

        assertThat(claims).extracting(Claim::key).containsExactlyElementsOf(requests.stream()
                .map(ClaimRequest::key).toList());
        assertThat(claims).allMatch(c -> c instanceof Claim.Claimed);
        assertThat(store.complete(requests.stream().map(ClaimRequest::key).toList(), "me")).isEmpty();
        assertThat(store.claim(requests, "you", LEASE)).allMatch(c -> c instanceof Claim.Done);
    }

    @Test
    void anUncountedClaimIsCountedOnlyWithItsOutcomeOrWhenCountedBeforeItRuns() {
        claimed("k", "a");
        assertThat(admin.inspect(key("k")).orElseThrow().attempts()).isZero();

        assertThat(store.count(key("k"), "a", LEASE)).isTrue();
        assertThat(admin.inspect(key("k")).orElseThrow().attempts()).isEqualTo(1);

        store.fail(key("k"), "a", "boom");
        assertThat(admin.inspect(key("k")).orElseThrow().attempts()).isEqualTo(1);
    }

    @Test
    void theBrokersCountSeedsTheAttemptsOnlyWhereTheStoreMayHaveLostTheRecord() {
        // Given a store that has kept its records since before now (on a cluster the epoch is per
        // slot, so the key's own slot is warmed up; the record itself is then forgotten)
        claimed("new", "a");
        admin.reset(key("new"));
        await().pollDelay(Duration.ofMillis(20)).until(() -> true);
        Instant bornNow = Instant.now();

        // When keys with no record arrive with a broker count of 4: one born before the store's
        // epoch (unknown birth), one born after it (the count comes from Idem's own deferrals)
        Claim.Claimed lost = (Claim.Claimed) store.claim(List.of(new ClaimRequest(key("old"), 4, null)), "a", LEASE)
                .get(0);
        Claim.Claimed neverClaimed = (Claim.Claimed) store.claim(List.of(new ClaimRequest(key("new"), 4, bornNow)),
                "a", LEASE).get(0);
        store.fail(key("old"), "a", "boom");
        Claim.Claimed next = (Claim.Claimed) store.claim(List.of(new ClaimRequest(key("old"), 9, null)), "b", LEASE)
                .get(0);

        // Then only the first takes the broker's count, and an existing record ignores it
        assertThat(lost.attempt()).isEqualTo(4);
        assertThat(neverClaimed.attempt()).isEqualTo(1);
        assertThat(next.attempt()).isEqualTo(5);
    }

    @Test
    void aDoomedKeyIsHandedToTheNextOwnerWithItsReasonAndNeverCountedTwice() {
        // Given an owner that decided the dead letter and then crashed
        claim("k", "a", SHORT_LEASE);
        assertThat(store.doom(key("k"), "a", "non-retryable failure", "java.lang.IllegalStateException: bad")).isTrue();

        // When the next owner takes the key over
        Claim.Claimed next = (Claim.Claimed) await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "b", LEASE), c -> c instanceof Claim.Claimed);

        // Then it learns the reason and the original failure, and dooming again keeps the first ones
        assertThat(next.deadLetterReason()).contains("non-retryable failure");
        assertThat(next.lastError()).contains("java.lang.IllegalStateException: bad");
        assertThat(store.doom(key("k"), "b", "other reason", "other error")).isTrue();
        ClaimRecord record = admin.inspect(key("k")).orElseThrow();
        assertThat(record.deadLetterReason()).contains("non-retryable failure");
        assertThat(record.failures()).isEqualTo(1);
        assertThat(record.attempts()).isEqualTo(1);
    }

    @Test
    void aPostponedDeadLetterIsBusyForEveryCopyUntilItsDelayEnds() {
        claimed("k", "a");
        store.doom(key("k"), "a", "attempts exhausted", "boom");

        assertThat(store.postpone(key("k"), "a", Duration.ofMillis(400))).isTrue();

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Busy.class);
        assertThat(claim("k", "c", LEASE)).isInstanceOf(Claim.Busy.class);
        Claim.Claimed later = (Claim.Claimed) await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "d", LEASE), c -> c instanceof Claim.Claimed);
        assertThat(later.deadLetterReason()).contains("attempts exhausted");
    }

    @Test
    void aCompensationCutOffByACrashIsTakenOverOnceAfterItsLease() {
        // (a done window longer than the test, so the dead record outlives its compensation)
        store = newStore(Duration.ofMinutes(1));
        admin = (ClaimAdmin) store;
        // Given a key dead-lettered by "a", whose compensation lease then runs out (a crashed)
        long fence = claimed("k", "a").fence();
        store.doom(key("k"), "a", "attempts exhausted", "boom");
        assertThat(store.deadLetter(key("k"), "a", SHORT_LEASE)).isTrue();
        assertThat(claim("k", "b", LEASE)).as("busy while a's compensation lease lives, in case a dies")
                .isInstanceOf(Claim.Busy.class);

        // When "b" claims it after the lease
        Claim taken = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "b", LEASE), c -> c instanceof Claim.Compensate);

        // Then "b" holds the compensation: nobody else gets it, and only "b" can record its outcome
        assertThat(((Claim.Compensate) taken).reason()).isEqualTo("attempts exhausted");
        assertThat(((Claim.Compensate) taken).fence()).as("the dead-lettering claim's fence, which names it")
                .isEqualTo(fence);
        assertThat(claim("k", "c", LEASE)).isInstanceOf(Claim.Busy.class);
        assertThat(admin.pendingCompensations(group, 10)).extracting(ClaimAdmin.KeyRecord::key).containsExactly(key("k"));
        assertThat(store.recordCompensation(key("k"), "a", CompensationOutcome.OK)).isFalse();
        assertThat(store.recordCompensation(key("k"), "b", CompensationOutcome.OK)).isTrue();
        assertThat(claim("k", "d", LEASE)).isInstanceOf(Claim.Dead.class);
        assertThat(admin.pendingCompensations(group, 10)).isEmpty();
        assertThat(admin.deadKeys(group, 10)).extracting(ClaimAdmin.KeyRecord::key).containsExactly(key("k"));
    }

    @Test
    void aDeadLetteringNamedByAnOlderFenceKeepsItForTheTakeoverOfItsCompensation() {
        store = newStore(Duration.ofMinutes(1));
        // Given a key recovered after a Redis loss: claimed anew, marked dead under the fence its
        // ledger recorded with the first dead letter, and its compensation cut off by a crash
        long recorded = 1_700_000_000_000_000L;
        assertThat(claimed("k", "a").fence()).isGreaterThan(recorded);
        assertThat(store.deadLetter(key("k"), "a", SHORT_LEASE, recorded)).isTrue();

        // When "b" takes the compensation over after its lease
        Claim taken = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "b", LEASE), c -> c instanceof Claim.Compensate);

        // Then it is named by the recorded fence, as the first run was
        assertThat(((Claim.Compensate) taken).fence()).isEqualTo(recorded);
    }

    @Test
    void aCompensationHeldButNeverStartedIsReleasedToTheNextOwnerAtOnceAndStaysDead() {
        store = newStore(Duration.ofMinutes(1));
        admin = (ClaimAdmin) store;
        // Given a dead key whose compensation "b" took over and then gave up unstarted (its batch closed
        // before the message ran: a rebalance, a redelivery of an earlier message)
        claimed("k", "a");
        store.doom(key("k"), "a", "attempts exhausted", "boom");
        assertThat(store.deadLetter(key("k"), "a", SHORT_LEASE)).isTrue();
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "b", LEASE), c -> c instanceof Claim.Compensate);

        // When "b" releases it (and a renewal of b's, sent before, arrives after)
        store.release(List.of(key("k")), "b");
        assertThat(store.renew(Set.of(key("k")), "b", LEASE)).as("no longer b's to renew").containsExactly(key("k"));

        // Then the next owner takes the compensation over at once, not after b's lease, and it is still
        // the dead key's (its reason kept, "b" no longer able to record an outcome)
        Claim next = claim("k", "c", LEASE);
        assertThat(next).isInstanceOf(Claim.Compensate.class);
        assertThat(((Claim.Compensate) next).reason()).isEqualTo("attempts exhausted");
        assertThat(store.recordCompensation(key("k"), "b", CompensationOutcome.OK)).isFalse();
        assertThat(store.recordCompensation(key("k"), "c", CompensationOutcome.OK)).isTrue();
        assertThat(claim("k", "d", LEASE)).isInstanceOf(Claim.Dead.class);
    }

    @Test
    void renewalExtendsTheLeaseSoNoOneCanTakeOver() {
        claim("k", "a", Duration.ofMillis(300));
        claimed("dead", "a");
        store.doom(key("dead"), "a", "attempts exhausted", "");
        store.deadLetter(key("dead"), "a", Duration.ofMillis(300));

        for (int i = 0; i < 4; i++) {
            assertThat(store.renew(Set.of(key("k"), key("dead")), "a", Duration.ofMillis(300))).isEmpty();
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
        }

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Busy.class);
        assertThat(claim("dead", "b", LEASE)).as("its compensation is still held").isInstanceOf(Claim.Busy.class);
    }

    @Test
    void resetForgetsTheKey() {
        claimed("k", "a");
        store.doom(key("k"), "a", "attempts exhausted", "boom");
        store.deadLetter(key("k"), "a", LEASE);

        admin.reset(key("k"));

        assertThat(admin.inspect(key("k"))).isEmpty();
        assertThat(claimed("k", "b").fresh()).isTrue();
    }
}
