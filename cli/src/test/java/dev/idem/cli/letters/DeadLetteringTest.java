package dev.idem.cli.letters;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A dead letter published twice for one dead-lettering (its publisher died before recording it, and
 * the takeover published it again) counts once; letters of other dead-letterings, and letters Idem
 * did not write, each count on their own.
 */
class DeadLetteringTest {

    private static Letter letter(String entry, String key, String compensationId) {
        Map<String, String> idem = compensationId == null ? Map.of("idem-idempotency-key", key)
                : Map.of("idem-idempotency-key", key, "idem-compensation-id", compensationId);
        return new Letter(entry, null, new byte[0], List.of(), idem, null, null, null);
    }

    @Test
    void theLettersOfOneDeadLetteringCountOnceAndNameTheirCopies() {
        List<Letter> topic = List.of(letter("0:0", "order-1", "aaa"), letter("0:1", "order-2", "bbb"),
                letter("0:2", "order-1", "aaa"), letter("0:3", "order-1", "ccc"), letter("0:4", "foreign", null),
                letter("0:5", "foreign", null));

        List<DeadLettering> deadLetterings = DeadLettering.of(topic);

        assertThat(deadLetterings).extracting(d -> d.letter().entry()).containsExactly("0:0", "0:1", "0:3", "0:4", "0:5");
        assertThat(deadLetterings.get(0).copies()).isEqualTo(2);
        assertThat(deadLetterings.get(0).others()).containsExactly("0:2");
        assertThat(deadLetterings.subList(1, deadLetterings.size())).allSatisfy(d -> assertThat(d.copies()).isEqualTo(1));
        assertThat(LetterGroup.of(DeadLettering.firsts(topic)).stream().mapToInt(LetterGroup::count).sum()).isEqualTo(5);
    }
}
