package dev.idem.cli.letters;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One dead-lettering of a key, however many letters it left in the topic: a process that dies after
 * publishing a dead letter and before recording it publishes it again when its key is taken over
 * (the letter is never lost, and may come twice). The letters of one dead-lettering share their
 * {@code idem-compensation-id}; a letter without it (not Idem's) is a dead-lettering of its own.
 * Immutable.
 *
 * @param letter the first letter, in position order
 * @param copies how many letters it left, 1 or more
 * @param others the entries of the letters after the first
 */
public record DeadLettering(Letter letter, int copies, List<String> others) {

    /** {@code letters} one per dead-lettering, in the order of each one's first letter. */
    public static List<DeadLettering> of(List<Letter> letters) {
        Map<Object, List<Letter>> byId = new LinkedHashMap<>();
        for (Letter letter : letters) {
            String id = letter.compensationId();
            byId.computeIfAbsent(id == null ? new Object() : id, k -> new ArrayList<>()).add(letter);
        }
        List<DeadLettering> all = new ArrayList<>(byId.size());
        byId.values().forEach(same -> all.add(new DeadLettering(same.get(0), same.size(),
                same.stream().skip(1).map(Letter::entry).toList())));
        return List.copyOf(all);
    }

    /** The first letter of each dead-lettering. */
    public static List<Letter> firsts(List<Letter> letters) {
        return of(letters).stream().map(DeadLettering::letter).toList();
    }
}
