package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** When a store may complete a batch by its record: only when the completion covers every compact key. */
class CompactClaimsTest {

    private final CompactClaims claims = new CompactClaims();

    @Test
    void aCompletionCoveringEveryCompactKeyOfItsBatchUsesTheBatchRecordOnce() {
        claims.claimed("b1", "a", List.of("k1", "k2"));

        CompactClaims.Plan plan = claims.plan(List.of("k1", "k2"), "a");

        assertThat(plan.batches()).isEqualTo(Map.of("b1", List.of("k1", "k2")));
        assertThat(plan.single()).isEmpty();
        // Forgotten at once: the same keys again (a retry after a failed call) go one by one.
        assertThat(claims.plan(List.of("k1", "k2"), "a").single()).containsExactly("k1", "k2");
    }

    @Test
    void aPartialCompletionGoesKeyByKeyAndTheRestThenCompletesTheBatch() {
        claims.claimed("b1", "a", List.of("k1", "k2", "k3"));

        CompactClaims.Plan first = claims.plan(List.of("k1"), "a");
        assertThat(first.batches()).isEmpty();
        assertThat(first.single()).containsExactly("k1");

        // Until Redis answered for k1, the batch still counts it as compact.
        assertThat(claims.plan(List.of("k2", "k3"), "a").batches()).isEmpty();
        claims.changed("k1", "a");
        assertThat(claims.plan(List.of("k2", "k3"), "a").batches()).containsOnlyKeys("b1");
    }

    @Test
    void onlyTheBatchesOwnerChangesItsKeysAndAnotherOwnerCompletesKeyByKey() {
        claims.claimed("b1", "a", List.of("k1", "k2"));

        claims.changed("k2", "b");
        CompactClaims.Plan byOther = claims.plan(List.of("k1", "k2"), "b");

        assertThat(byOther.batches()).isEmpty();
        assertThat(byOther.single()).containsExactly("k1", "k2");
        assertThat(claims.plan(List.of("k1"), "a").batches()).isEmpty();
    }

    @Test
    void aKeyClaimedCompactInANewBatchLeavesItsOldOne() {
        claims.claimed("b1", "a", List.of("k1", "k2"));
        claims.claimed("b2", "c", List.of("k2"));

        assertThat(claims.plan(List.of("k1"), "a").batches()).containsOnlyKeys("b1");
        assertThat(claims.plan(List.of("k2"), "c").batches()).containsOnlyKeys("b2");
    }

    @Test
    void theOldestBatchesAreForgottenAndTheirKeysThenGoOneByOne() {
        claims.claimed("b0", "a", List.of("k0"));
        for (int i = 1; i <= 5_000; i++) {
            claims.claimed("b" + i, "a", List.of("k" + i));
        }

        assertThat(claims.plan(List.of("k0"), "a").single()).containsExactly("k0");
        assertThat(claims.plan(List.of("k5000"), "a").batches()).containsOnlyKeys("b5000");
    }
}
