package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * When a store completes a batch by its record: whole once every compact key has completed, by the
 * places of the keys that complete before the rest.
 */
class CompactClaimsTest {

    private final CompactClaims<String> claims = new CompactClaims<>();

    @Test
    void aCompletionCoveringEveryCompactKeyOfItsBatchUsesTheBatchRecordOnce() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1));

        CompactClaims.Plan<String> plan = claims.plan(List.of("k1", "k2"), "a");

        assertThat(plan.whole()).isEqualTo(Map.of("b1", Map.of("k1", 0, "k2", 1)));
        assertThat(plan.marked()).isEmpty();
        assertThat(plan.single()).isEmpty();
        // Forgotten at once: the same keys again (a retry after a failed call) go one by one.
        assertThat(claims.plan(List.of("k1", "k2"), "a").single()).containsExactly("k1", "k2");
    }

    @Test
    void aKeyNamedTwiceInACompletionCountsOnceSoItsBatchIsNotCompletedWholeWithoutTheOthers() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1, "k3", 2));

        CompactClaims.Plan<String> plan = claims.plan(List.of("k1", "k1", "k2"), "a");

        assertThat(plan.whole()).isEmpty();
        assertThat(plan.marked()).isEqualTo(Map.of("b1", Map.of("k1", 0, "k2", 1)));
        assertThat(claims.plan(List.of("k3"), "a").whole()).isEqualTo(Map.of("b1", Map.of("k1", 0, "k2", 1, "k3", 2)));
    }

    @Test
    void aMarkedKeyThatLeavesItsBatchNoLongerCountsTowardsCompletingItWhole() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1, "k3", 2));
        claims.plan(List.of("k1"), "a");

        // k1 is rewritten as a full record (a claim again): its mark must go with it, or the batch
        // would count it and complete whole while k3 still runs.
        claims.changed("k1", "a");
        CompactClaims.Plan<String> plan = claims.plan(List.of("k2"), "a");

        assertThat(plan.whole()).isEmpty();
        assertThat(plan.marked()).isEqualTo(Map.of("b1", Map.of("k2", 1)));
    }

    @Test
    void aMarkedKeyClaimedIntoAnotherBatchAfterACallWithNoAnswerLeavesItsMarkBehind() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1, "k3", 2));
        claims.unanswered(claims.plan(List.of("k1"), "a"), "a");

        claims.claimed("b2", "a", Map.of("k1", 0));
        CompactClaims.Plan<String> plan = claims.plan(List.of("k2"), "a");

        assertThat(plan.whole()).isEmpty();
        assertThat(plan.marked()).isEqualTo(Map.of("b1", Map.of("k2", 1)));
    }

    @Test
    void keysCompletingBeforeTheRestMarkTheirPlacesAndTheRestThenCompletesTheBatch() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1, "k3", 2));

        CompactClaims.Plan<String> first = claims.plan(List.of("k2"), "a");
        assertThat(first.whole()).isEmpty();
        assertThat(first.single()).isEmpty();
        assertThat(first.marked()).isEqualTo(Map.of("b1", Map.of("k2", 1)));

        // The batch record stands for every key once the rest have completed, k2 included.
        CompactClaims.Plan<String> rest = claims.plan(List.of("k1", "k3"), "a");
        assertThat(rest.whole()).isEqualTo(Map.of("b1", Map.of("k1", 0, "k2", 1, "k3", 2)));
        assertThat(rest.marked()).isEmpty();
    }

    @Test
    void marksOfACallWithNoAnswerStaySentAndAreSentAgainByARetry() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1, "k3", 2));
        CompactClaims.Plan<String> first = claims.plan(List.of("k1"), "a");

        claims.unanswered(first, "a");

        assertThat(claims.plan(List.of("k1"), "a").marked()).isEqualTo(Map.of("b1", Map.of("k1", 0)));
        assertThat(claims.plan(List.of("k2", "k3"), "a").whole()).containsOnlyKeys("b1");
    }

    @Test
    void aBatchWhoseMarksWereRefusedGoesKeyByKeyNamingEachKeysCompactValue() {
        claims.claimed("idem:batch:Ab3Ab3Ab3", "a", Map.of("k1", 0, "k2", 1, "k3", 2));
        claims.plan(List.of("k1"), "a");

        claims.refused("idem:batch:Ab3Ab3Ab3");
        CompactClaims.Plan<String> plan = claims.plan(List.of("k2"), "a");

        assertThat(plan.marked()).isEmpty();
        assertThat(plan.whole()).isEmpty();
        assertThat(plan.single()).containsExactly("k2");
        assertThat(plan.ownCompact()).isEqualTo(Map.of("k2", "Ab3Ab3Ab301"));
    }

    @Test
    void aWholeBatchOfACallWithNoAnswerIsKnownAgain() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1));
        CompactClaims.Plan<String> plan = claims.plan(List.of("k1", "k2"), "a");

        claims.unanswered(plan, "a");

        assertThat(claims.plan(List.of("k1", "k2"), "a").whole()).containsOnlyKeys("b1");
    }

    @Test
    void aKeyChangedLeavesItsBatchWhichTheRestThenCompleteWhole() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1, "k3", 2));

        claims.changed("k1", "a");

        assertThat(claims.plan(List.of("k2", "k3"), "a").whole()).isEqualTo(Map.of("b1", Map.of("k2", 1, "k3", 2)));
    }

    @Test
    void onlyTheBatchesOwnerChangesItsKeysAndAnotherOwnerCompletesKeyByKey() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1));

        claims.changed("k2", "b");
        CompactClaims.Plan<String> byOther = claims.plan(List.of("k1", "k2"), "b");

        assertThat(byOther.whole()).isEmpty();
        assertThat(byOther.marked()).isEmpty();
        assertThat(byOther.single()).containsExactly("k1", "k2");
        assertThat(claims.plan(List.of("k1"), "a").marked()).containsOnlyKeys("b1");
    }

    @Test
    void aKeyClaimedCompactInANewBatchLeavesItsOldOne() {
        claims.claimed("b1", "a", Map.of("k1", 0, "k2", 1));
        claims.claimed("b2", "c", Map.of("k2", 0));

        assertThat(claims.plan(List.of("k1"), "a").whole()).containsOnlyKeys("b1");
        assertThat(claims.plan(List.of("k2"), "c").whole()).containsOnlyKeys("b2");
    }

    @Test
    void theOldestBatchesAreForgottenAndTheirKeysThenGoOneByOne() {
        claims.claimed("b0", "a", Map.of("k0", 0));
        for (int i = 1; i <= 5_000; i++) {
            claims.claimed("b" + i, "a", Map.of("k" + i, 0));
        }

        assertThat(claims.plan(List.of("k0"), "a").single()).containsExactly("k0");
        assertThat(claims.plan(List.of("k5000"), "a").whole()).containsOnlyKeys("b5000");
    }

    @Test
    void aPlaceIsTwoBase62DigitsAndACompactValueNamesTheBatchAndThePlace() {
        assertThat(CompactClaims.placeText(0)).isEqualTo("00");
        assertThat(CompactClaims.placeText(63)).isEqualTo("11");
        assertThat(CompactClaims.placeText(CompactClaims.MAX_PLACES - 1)).isEqualTo("zz");
        assertThatThrownBy(() -> CompactClaims.placeText(CompactClaims.MAX_PLACES))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(CompactClaims.compactValue("idem:batch:Ab3Ab3Ab3", 62)).isEqualTo("Ab3Ab3Ab310");
    }
}
