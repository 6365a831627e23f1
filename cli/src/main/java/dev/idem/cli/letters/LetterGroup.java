package dev.idem.cli.letters;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The letters of one cause, by their failure group: how many, what failed where, the first and the
 * last failure. Immutable.
 *
 * @param fingerprint the failure group ({@code idem-failure-group}); "-" for letters Idem did not write
 * @param count       how many letters
 * @param exception   the failure's class, or null
 * @param site        the application frame it failed in, or null
 * @param reason      why the first of them was dead-lettered, or null
 * @param first       the earliest failure, or null when none is known
 * @param last        the latest failure, or null when none is known
 * @param letters     the letters, in position order
 */
public record LetterGroup(String fingerprint, int count, @Nullable String exception, @Nullable String site,
                          @Nullable String reason, @Nullable Instant first, @Nullable Instant last, List<Letter> letters) {

    /** The groups of {@code letters}, largest first. */
    public static List<LetterGroup> of(List<Letter> letters) {
        Map<String, List<Letter>> byGroup = new LinkedHashMap<>();
        for (Letter letter : letters) {
            String fingerprint = letter.failureGroup() == null ? "-" : letter.failureGroup();
            byGroup.computeIfAbsent(fingerprint, f -> new ArrayList<>()).add(letter);
        }
        List<LetterGroup> groups = new ArrayList<>();
        byGroup.forEach((fingerprint, members) -> {
            Letter sample = members.get(0);
            List<Instant> times = members.stream().map(Letter::failedAt).filter(t -> t != null).sorted().toList();
            groups.add(new LetterGroup(fingerprint, members.size(), sample.exceptionClass(), sample.failureSite(),
                    sample.reason(), times.isEmpty() ? null : times.get(0), times.isEmpty() ? null : times.get(times.size() - 1),
                    List.copyOf(members)));
        });
        groups.sort(Comparator.comparingInt(LetterGroup::count).reversed().thenComparing(LetterGroup::fingerprint));
        return List.copyOf(groups);
    }
}
