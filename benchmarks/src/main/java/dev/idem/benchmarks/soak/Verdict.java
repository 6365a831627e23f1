package dev.idem.benchmarks.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The soak's promises, checked id by id: every good or transient id applied once, every poison id
 * never applied, dead-lettered at least once and compensated exactly once, nothing left unconsumed.
 * A second dead-letter copy is allowed (decision 0017) and counted apart.
 */
final class Verdict {

    final int goodIds;
    final int transientIds;
    final int poisonIds;
    final List<String> lost = new ArrayList<>();
    final List<String> doubled = new ArrayList<>();
    final List<String> poisonApplied = new ArrayList<>();
    final List<String> poisonNotCompensated = new ArrayList<>();
    final List<String> poisonCompensatedTwice = new ArrayList<>();
    final List<String> poisonWithoutLetter = new ArrayList<>();
    final List<String> goodDeadLettered = new ArrayList<>();
    final List<String> unknown = new ArrayList<>();
    /** Poison ids with more than one dead-letter copy, and how many copies. */
    final Map<String, Integer> extraLetters = new TreeMap<>();
    final long lag;

    Verdict(Map<String, Integer> sent, Tally tally) {
        int good = 0;
        int transients = 0;
        int poison = 0;
        for (String id : new TreeSet<>(sent.keySet())) {
            Kind kind = Kind.of(id);
            int effects = tally.effects().getOrDefault(id, 0);
            int compensations = tally.compensations().getOrDefault(id, 0);
            int letters = tally.deadLetters().getOrDefault(id, 0);
            if (kind.applies()) {
                if (kind == Kind.GOOD) {
                    good++;
                } else {
                    transients++;
                }
                if (effects == 0) {
                    lost.add(id);
                }
                if (letters > 0 || compensations > 0) {
                    goodDeadLettered.add(id);
                }
            } else {
                poison++;
                if (effects > 0) {
                    poisonApplied.add(id);
                }
                if (compensations == 0) {
                    poisonNotCompensated.add(id);
                }
                if (compensations > 1) {
                    poisonCompensatedTwice.add(id);
                }
                if (letters == 0) {
                    poisonWithoutLetter.add(id);
                }
                if (letters > 1) {
                    extraLetters.put(id, letters);
                }
            }
            if (effects > 1) {
                doubled.add(id);
            }
        }
        for (Map<String, Integer> seen : List.of(tally.effects(), tally.compensations(), tally.deadLetters())) {
            seen.keySet().stream().filter(id -> !sent.containsKey(id)).forEach(unknown::add);
        }
        this.goodIds = good;
        this.transientIds = transients;
        this.poisonIds = poison;
        this.lag = tally.lag();
    }

    /** Every promise kept. */
    boolean kept() {
        return violating().isEmpty() && lag == 0;
    }

    /** The ids that broke a promise, each once, in order. */
    List<String> violating() {
        TreeSet<String> ids = new TreeSet<>();
        for (List<String> list : List.of(lost, doubled, poisonApplied, poisonNotCompensated, poisonCompensatedTwice,
                poisonWithoutLetter, goodDeadLettered, unknown)) {
            ids.addAll(list);
        }
        return List.copyOf(ids);
    }
}
