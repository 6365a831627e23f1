package dev.idem.benchmarks.soak;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The soak's promises, checked id by id: every good or transient id applied once, every poison id
 * never applied, dead-lettered at least once and compensated exactly once, nothing left unconsumed.
 * A second dead-letter copy is allowed (decision 0017) and counted apart. In Redis-only mode the
 * promise ends where Redis loses data: an effect or a compensation repeated after a loss that lost
 * the id's record (a restart that came back empty, a failover whose promoted replica did not have it
 * as done) is allowed and counted apart; one repeated with no such loss between is a violation.
 */
final class Verdict {

    final int goodIds;
    final int transientIds;
    final int poisonIds;
    final List<String> lost = new ArrayList<>();
    final List<String> doubled = new ArrayList<>();
    /** Redis-only mode: ids whose every repeat followed a loss of their record. */
    final List<String> doubledAfterLoss = new ArrayList<>();
    final List<String> compensatedAgainAfterLoss = new ArrayList<>();
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
        this(sent, tally, true, List.of(), Map.of(), Map.of());
    }

    /**
     * @param guarded           guarded mode: no repeat is allowed
     * @param losses            what Redis lost, and when
     * @param effectTimes       when each repeated id's effects were written, in order
     * @param compensationTimes when each repeatedly compensated id's compensations were written
     */
    Verdict(Map<String, Integer> sent, Tally tally, boolean guarded, List<SoakRedis.Loss> losses,
            Map<String, List<Instant>> effectTimes, Map<String, List<Instant>> compensationTimes) {
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
                if (compensations > 1 && !guarded && afterLosses(id, compensationTimes.get(id), losses)) {
                    compensatedAgainAfterLoss.add(id);
                } else if (compensations > 1) {
                    poisonCompensatedTwice.add(id);
                }
                if (letters == 0) {
                    poisonWithoutLetter.add(id);
                }
                if (letters > 1) {
                    extraLetters.put(id, letters);
                }
            }
            if (effects > 1 && !guarded && afterLosses(id, effectTimes.get(id), losses)) {
                doubledAfterLoss.add(id);
            } else if (effects > 1) {
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

    /** Whether every repeat of {@code id} (at {@code times}) came after a loss of its record since the one before. */
    static boolean afterLosses(String id, List<Instant> times, List<SoakRedis.Loss> losses) {
        if (times == null || times.size() < 2) {
            return false;
        }
        for (int k = 1; k < times.size(); k++) {
            Instant before = times.get(k - 1);
            Instant repeat = times.get(k);
            boolean lost = losses.stream().anyMatch(loss -> loss.at().isAfter(before) && loss.at().isBefore(repeat)
                    && loss.lost(id));
            if (!lost) {
                return false;
            }
        }
        return true;
    }
}
