package dev.idem.benchmarks.soak;

import java.time.Duration;
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
 * promise ends where Redis loses data, and where a process stops between an effect and its
 * completion: an effect or a compensation repeated after a loss of the id's record (a restart that
 * came back empty, a failover whose promoted replica did not have it as done) since the claim it
 * repeats ran under, or after the process that wrote it was killed within {@link #COMPLETION_LIMIT}
 * of the effect, or paused beyond its lease between its claim and then, or written by a process
 * paused beyond its lease while its handler ran, is allowed and counted apart; any other repeat is
 * a violation.
 */
final class Verdict {

    /**
     * How long after an effect its completion is sent: the promise says within a second (the
     * completion timer), and the chaos loop notes a stop a few milliseconds before it strikes.
     */
    static final Duration COMPLETION_LIMIT = Duration.ofMillis(1_100);

    final int goodIds;
    final int transientIds;
    final int poisonIds;
    final List<String> lost = new ArrayList<>();
    final List<String> doubled = new ArrayList<>();
    /** Redis-only mode: ids whose every repeat followed a loss of their record. */
    final List<String> doubledAfterLoss = new ArrayList<>();
    /**
     * Redis-only mode: of {@link #doubledAfterLoss}, the ids whose earlier effect was written after
     * the loss: the loss took their claim, not their done record (what a completion restores, 0051).
     */
    final List<String> doubledAfterClaimLoss = new ArrayList<>();
    /** Redis-only mode: ids with a repeat that followed a stop of the process between claim and completion. */
    final List<String> doubledAfterStop = new ArrayList<>();
    /** The longest time from an effect to the kill that let it repeat, among {@link #doubledAfterStop}. */
    Duration longestEffectToKill = Duration.ZERO;
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
        this(sent, tally, true, List.of(), List.of(), Map.of(), Map.of());
    }

    /**
     * @param guarded          guarded mode: no repeat is allowed
     * @param losses           what Redis lost, and when
     * @param stops            the consumer processes killed or paused, and when
     * @param effectRows       each repeated id's effects, in the order they were written
     * @param compensationRows each repeatedly compensated id's compensations, in order
     */
    Verdict(Map<String, Integer> sent, Tally tally, boolean guarded, List<SoakRedis.Loss> losses,
            List<Chaos.Stop> stops, Map<String, List<Tally.Row>> effectRows,
            Map<String, List<Tally.Row>> compensationRows) {
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
                if (compensations > 1 && !guarded
                        && explained(id, compensationRows.get(id), losses, List.of()) == Explained.BY_LOSSES) {
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
            Explained why = effects > 1 && !guarded ? explained(id, effectRows.get(id), losses, stops) : Explained.NOT;
            if (why == Explained.BY_LOSSES) {
                doubledAfterLoss.add(id);
                if (claimLost(id, effectRows.get(id), losses)) {
                    doubledAfterClaimLoss.add(id);
                }
            } else if (why == Explained.BY_STOPS) {
                doubledAfterStop.add(id);
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

    private enum Explained { NOT, BY_LOSSES, BY_STOPS }

    /** Whether {@code loss} took {@code id}'s record after {@code after} and before {@code before}. */
    private static boolean lostBetween(SoakRedis.Loss loss, String id, Instant after, Instant before) {
        return loss.lost(id) && loss.at().isAfter(after) && loss.at().isBefore(before);
    }

    /** Whether a loss fell between a repeated row's claim and its effect. */
    private static boolean claimLost(String id, List<Tally.Row> rows, List<SoakRedis.Loss> losses) {
        for (int k = 1; k < rows.size(); k++) {
            Tally.Row before = rows.get(k - 1);
            if (losses.stream().anyMatch(loss -> lostBetween(loss, id, before.claimed(), before.at()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether every repeat of {@code id} (its {@code rows} after the first) is explained: by a loss of
     * its record after the claim the row before ran under and before the repeat's claim, or by a stop
     * of the process that wrote the row before, in the window the promise names. BY_STOPS when at
     * least one repeat needed a stop.
     */
    private Explained explained(String id, List<Tally.Row> rows, List<SoakRedis.Loss> losses, List<Chaos.Stop> stops) {
        if (rows == null || rows.size() < 2) {
            return Explained.NOT;
        }
        Explained why = Explained.BY_LOSSES;
        for (int k = 1; k < rows.size(); k++) {
            Tally.Row before = rows.get(k - 1);
            Tally.Row repeat = rows.get(k);
            boolean lost = losses.stream().anyMatch(loss -> lostBetween(loss, id, before.claimed(), repeat.at())
                    && !repeat.claimed().isBefore(loss.from()));
            if (lost) {
                continue;
            }
            // The earlier run's process stopped before its completion went out (a kill after the effect,
            // a pause from its claim on), or the repeat's own process was paused past its lease while
            // its handler ran, and wrote its effect after another had taken the key over.
            Chaos.Stop stop = stops.stream().filter(s -> s.at().isBefore(repeat.at()) && ((s.pid() == before.pid()
                            && !s.at().isBefore(s.paused() ? before.claimed() : before.at())
                            && !s.at().isAfter(before.at().plus(COMPLETION_LIMIT)))
                            || (s.paused() && s.pid() == repeat.pid() && !s.at().isBefore(repeat.claimed()))))
                    .findFirst().orElse(null);
            if (stop == null) {
                return Explained.NOT;
            }
            if (!stop.paused()) {
                Duration gap = Duration.between(before.at(), stop.at());
                longestEffectToKill = gap.compareTo(longestEffectToKill) > 0 ? gap : longestEffectToKill;
            }
            why = Explained.BY_STOPS;
        }
        return why;
    }
}
