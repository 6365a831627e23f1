package dev.idem.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idem.core.IdempotencyKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ClaimStore} must have (DESIGN §3). Subclasses supply the store; the
 * same tests run against the in-memory store and against real Redis.
 */
public abstract class ClaimStoreContract {

    /** Done and dead keys are remembered this long in these tests. */
    protected static final Duration WINDOW = Duration.ofSeconds(1);
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration SHORT_LEASE = Duration.ofMillis(150);

    private ClaimStore store;
    private String group;

    /** A store whose done and dead records live {@code doneWindow}. */
    protected abstract ClaimStore newStore(Duration doneWindow);

    @BeforeEach
    void freshStoreAndKeys() {
        store = newStore(WINDOW);
        group = "g-" + UUID.randomUUID();
    }

    private IdempotencyKey key(String value) {
        return new IdempotencyKey(group, "orders", value);
    }

    private Claim claim(String value, String owner, Duration lease) {
        return store.claim(List.of(new ClaimRequest(key(value), 0)), owner, lease, true).get(0);
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
        assertThat(claim.suspect()).isFalse();
        assertThat(store.inspect(key("k")).orElseThrow().state()).isEqualTo(ClaimRecord.State.CLAIMED);
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
    void anExpiredLeaseCanBeTakenOverAndIsSuspect() {
        claim("k", "a", SHORT_LEASE);

        awaitTakeover("k", "b");

        assertThat(store.inspect(key("k")).orElseThrow().owner()).contains("b");
    }

    @Test
    void takingOverAnAbandonedClaimReportsItAsSuspect() {
        store.claim(List.of(new ClaimRequest(key("k"), 0)), "a", SHORT_LEASE, false);

        Claim takeover = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(25))
                .until(() -> claim("k", "b", LEASE), c -> c instanceof Claim.Claimed);

        assertThat(((Claim.Claimed) takeover).suspect()).isTrue();
    }

    @Test
    void aStaleOwnerCanNeitherReleaseNorCompleteNorFailNorDeadLetter() {
        claim("k", "a", SHORT_LEASE);
        awaitTakeover("k", "b");

        assertThat(store.complete(List.of(key("k")), "a")).containsExactly(key("k"));
        assertThat(store.fail(key("k"), "a", "boom")).isEmpty();
        assertThat(store.deadLetter(key("k"), "a", "boom")).isFalse();
        assertThat(store.renew(List.of(key("k")), "a", LEASE)).containsExactly(key("k"));
        store.release(List.of(key("k")), "a");

        ClaimRecord record = store.inspect(key("k")).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.CLAIMED);
        assertThat(record.owner()).contains("b");
        assertThat(record.failures()).isZero();
    }

    @Test
    void aReleasedClaimCanBeReclaimedByAnotherOwner() {
        claimed("k", "a");
        store.release(List.of(key("k")), "a");

        Claim.Claimed claim = claimed("k", "b");

        assertThat(claim.suspect()).isFalse();
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
        assertThat(store.inspect(key("k")).orElseThrow().lastError()).contains("java.io.IOException: disk");
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
        assertThat(store.inspect(key("k")).orElseThrow().state()).isEqualTo(ClaimRecord.State.DONE);
        await().atMost(Duration.ofSeconds(5)).until(() -> claim("k", "c", LEASE) instanceof Claim.Claimed);
    }

    @Test
    void aDeadKeyAnswersDeadUntilItsWindowEndsAndKeepsItsCompensationOutcome() {
        claimed("k", "a");

        assertThat(store.deadLetter(key("k"), "a", "boom")).isTrue();
        store.recordCompensation(key("k"), "ok");

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Dead.class);
        ClaimRecord record = store.inspect(key("k")).orElseThrow();
        assertThat(record.state()).isEqualTo(ClaimRecord.State.DEAD);
        assertThat(record.compensation()).contains("ok");
        assertThat(record.attempts()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> claim("k", "c", LEASE) instanceof Claim.Claimed);
    }

    @Test
    void aBatchClaimAnswersAsSingleClaimsWould() {
        // Given keys in every state: fresh, busy, done, dead, failed
        claimed("busy", "other");
        claimed("done", "other");
        store.complete(List.of(key("done")), "other");
        claimed("dead", "other");
        store.deadLetter(key("dead"), "other", "");
        claimed("failed", "other");
        store.fail(key("failed"), "other", "boom");
        List<String> values = List.of("fresh", "busy", "done", "dead", "failed");

        // When they are claimed in one batch
        List<Claim> batch = store.claim(values.stream().map(v -> new ClaimRequest(key(v), 0)).toList(),
                "me", LEASE, true);

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

        List<Claim> claims = store.claim(requests, "me", LEASE, false);

        assertThat(claims).extracting(Claim::key).containsExactlyElementsOf(requests.stream()
                .map(ClaimRequest::key).toList());
        assertThat(claims).allMatch(c -> c instanceof Claim.Claimed);
        assertThat(store.complete(requests.stream().map(ClaimRequest::key).toList(), "me")).isEmpty();
        assertThat(store.claim(requests, "you", LEASE, false)).allMatch(c -> c instanceof Claim.Done);
    }

    @Test
    void aTentativeClaimIsCountedOnlyWhenItsOutcomeIsKnownOrItStarts() {
        store.claim(List.of(new ClaimRequest(key("k"), 0)), "a", LEASE, false);
        assertThat(store.inspect(key("k")).orElseThrow().attempts()).isZero();

        assertThat(store.start(key("k"), "a")).isTrue();
        assertThat(store.inspect(key("k")).orElseThrow().attempts()).isEqualTo(1);

        store.fail(key("k"), "a", "boom");
        assertThat(store.inspect(key("k")).orElseThrow().attempts()).isEqualTo(1);
    }

    @Test
    void theBrokersCountSeedsTheAttemptsOfALostRecordOnly() {
        Claim.Claimed lost = (Claim.Claimed) store.claim(List.of(new ClaimRequest(key("k"), 4)), "a", LEASE, true)
                .get(0);
        store.fail(key("k"), "a", "boom");

        Claim.Claimed next = (Claim.Claimed) store.claim(List.of(new ClaimRequest(key("k"), 9)), "b", LEASE, true)
                .get(0);

        assertThat(lost.attempt()).isEqualTo(4);
        assertThat(next.attempt()).isEqualTo(5);
    }

    @Test
    void renewalExtendsTheLeaseSoNoOneCanTakeOver() {
        claim("k", "a", Duration.ofMillis(300));

        for (int i = 0; i < 4; i++) {
            assertThat(store.renew(Set.of(key("k")), "a", Duration.ofMillis(300))).isEmpty();
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
        }

        assertThat(claim("k", "b", LEASE)).isInstanceOf(Claim.Busy.class);
    }

    @Test
    void resetForgetsTheKey() {
        claimed("k", "a");
        store.deadLetter(key("k"), "a", "boom");

        store.reset(key("k"));

        assertThat(store.inspect(key("k"))).isEmpty();
        assertThat(claimed("k", "b").fresh()).isTrue();
    }
}
