package dev.idem.cli.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.cli.letters.Letter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReplayPlansTest {

    private static Replay.Plan sending(String entry, String key) {
        Letter letter = new Letter(entry, null, new byte[0], List.of(), Map.of("idem-consumer-group", "inventory",
                "idem-original-topic", "orders", "idem-idempotency-key", key), null, null, null);
        return new Replay.Plan(letter, Optional.empty(), true, true, false, "dead: reset, then sent");
    }

    @Test
    void ofThreeDeadLetterCopiesOfOneKeyOnlyTheNewestIsSent() {
        List<Replay.Plan> plans = List.of(sending("0:3", "order-7"), sending("0:4", "order-8"),
                sending("0:9", "order-7"), sending("0:12", "order-7"));

        List<Replay.Plan> once = Replay.oncePerKey(plans);

        assertThat(once).extracting(Replay.Plan::send).containsExactly(false, true, false, true);
        assertThat(once.get(0).note()).isEqualTo("same key as entry 0:12, the newest, sent in this run");
        assertThat(once.get(3)).isSameAs(plans.get(3));
        assertThat(once.get(0).done()).as("not a failure of the run").isTrue();
    }
}
