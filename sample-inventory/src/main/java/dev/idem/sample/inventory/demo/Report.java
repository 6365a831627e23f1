package dev.idem.sample.inventory.demo;

import dev.idem.sample.inventory.Order;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The verdict on a run: what was sent, what the database and the brokers hold, and the checks that
 * make it PASS. Every check compares the systems of record with the scenario decided up front, so a
 * doubled or lost effect, a missing or doubled dead letter or refund makes it FAIL. Immutable.
 */
final class Report {

    /**
     * What the service answers over HTTP: {@code GET /stock/{sku}} per SKU, and {@code GET /stats}'s
     * applied and compensations (null where it did not answer).
     */
    record Served(Map<String, Integer> stock, Integer applied, Integer compensations) {
    }

    /** One invariant and whether it held. */
    record Check(String invariant, boolean holds, String detail) {
    }

    private final List<String> lines;
    private final List<Check> checks;

    private Report(List<String> lines, List<Check> checks) {
        this.lines = List.copyOf(lines);
        this.checks = List.copyOf(checks);
    }

    /** Whether every check held. */
    boolean pass() {
        return checks.stream().allMatch(Check::holds);
    }

    List<Check> checks() {
        return checks;
    }

    /** Judges the run from what is observed now. */
    static Report judge(Scenario scenario, Observations observed, Names names, long sent, long duplicates,
                        int starts, int kills, Served served) throws Exception {
        Set<String> valid = scenario.orders().stream().map(Order::orderId).filter(id -> !scenario.isPoison(id))
                .collect(Collectors.toCollection(TreeSet::new));
        Map<String, Integer> deductions = observed.rowsPerOrder("deduction");
        Map<String, Integer> refunds = observed.rowsPerOrder("refund");
        Map<String, Integer> stock = observed.stock();
        Map<String, Integer> expected = scenario.expectedStock();
        Map<String, Integer> kafkaLetters = observed.keyCounts(names.kafkaDeadLetters());
        long rocketMqLetters = observed.rocketMqDeadLetters();
        Map<String, Integer> refundEvents = observed.keyCounts(names.refundTopic());
        long kafkaPoison = scenario.ordersOn("kafka", true);
        long rocketMqPoison = scenario.ordersOn("rocketmq", true);
        long rocketMqOrders = scenario.ordersOn("rocketmq", false);
        long unknownSku = scenario.orders().stream().filter(o -> o.sku().equals(Scenario.UNKNOWN_SKU)).count();

        List<String> lines = new ArrayList<>();
        lines.add(String.format("orders          %d: %d valid, %d poison (%d unknown SKU, %d more than the SKU's stock)%s",
                scenario.orders().size(), valid.size(), scenario.poison().size(), unknownSku,
                scenario.poison().size() - unknownSku, rocketMqOrders > 0 ? "; " + rocketMqOrders + " on RocketMQ, the rest on Kafka" : ", on Kafka"));
        lines.add(String.format("deliveries      %d sent (%d copies of each order, at once), plus the redeliveries after %d crash(es)",
                sent, Scenario.COPIES, kills));
        lines.add(String.format("failures        %d orders failed their first attempt on purpose (rolled back, retried)",
                scenario.transientFailures()));
        lines.add(String.format("instances       2, started %d times (one killed with SIGKILL and started again)", starts));
        long effects = deductions.values().stream().mapToLong(Integer::longValue).sum();
        lines.add(String.format("effects         %d deductions for %d valid orders", effects, valid.size()));
        lines.add(String.format("duplicates      %d copies found already applied (Idem's duplicate outcomes, instances alive at the end)",
                duplicates));
        lines.add(String.format("dead letters    %d (%s %d%s) for %d poison orders",
                kafkaLetters.values().stream().mapToLong(Integer::longValue).sum() + rocketMqLetters,
                names.kafkaDeadLetters(), kafkaLetters.values().stream().mapToLong(Integer::longValue).sum(),
                rocketMqPoison > 0 || rocketMqLetters > 0 ? ", " + names.rocketMqDeadLetters() + " " + rocketMqLetters : "",
                scenario.poison().size()));
        lines.add(String.format("compensations   %d refunds recorded, %d %s events",
                refunds.values().stream().mapToLong(Integer::longValue).sum(),
                refundEvents.values().stream().mapToLong(Integer::longValue).sum(), names.refundTopic()));
        lines.add("");
        lines.add(String.format("  %-8s %6s %9s %7s", "SKU", "seed", "expected", "actual"));
        boolean stockRight = true;
        for (Map.Entry<String, Integer> sku : expected.entrySet()) {
            Integer actual = stock.get(sku.getKey());
            boolean right = sku.getValue().equals(actual);
            stockRight &= right;
            lines.add(String.format("  %-8s %6d %9d %7s%s", sku.getKey(), scenario.seedStock().get(sku.getKey()),
                    sku.getValue(), actual, right ? "" : "   <- wrong"));
        }

        List<Check> checks = new ArrayList<>();
        List<String> doubled = deductions.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
        List<String> missing = valid.stream().filter(id -> !deductions.containsKey(id)).toList();
        checks.add(new Check("every valid order deducted exactly once", doubled.isEmpty() && missing.isEmpty(),
                doubled.size() + " deducted more than once" + sample(doubled) + ", " + missing.size() + " never" + sample(missing)));
        List<String> poisonDeducted = scenario.poison().stream().filter(deductions::containsKey).toList();
        checks.add(new Check("no poison order deducted", poisonDeducted.isEmpty(), poisonDeducted.size() + sample(poisonDeducted)));
        checks.add(new Check("stock of every SKU as expected", stockRight && stock.keySet().equals(expected.keySet()),
                "actual " + stock + ", expected " + expected));
        long refundRows = refunds.values().stream().mapToLong(Integer::longValue).sum();
        checks.add(new Check("GET /stock/{sku} and GET /stats answer the database's figures",
                served.stock().equals(stock) && Long.valueOf(effects).equals(toLong(served.applied()))
                        && Long.valueOf(refundRows).equals(toLong(served.compensations())),
                "served stock " + served.stock() + ", applied " + served.applied() + ", compensations "
                        + served.compensations() + "; database " + stock + ", " + effects + ", " + refundRows));
        List<String> kafkaPoisonIds = scenario.poison().stream().filter(id -> scenario.broker(id).equals("kafka")).sorted().toList();
        boolean kafkaLettersOnce = kafkaLetters.keySet().equals(Set.copyOf(kafkaPoisonIds))
                && kafkaLetters.values().stream().allMatch(n -> n == 1);
        checks.add(new Check("every poison order dead-lettered once", kafkaLettersOnce && rocketMqLetters == rocketMqPoison,
                names.kafkaDeadLetters() + " " + kafkaLetters + " (expected " + kafkaPoison + " keys once), "
                        + names.rocketMqDeadLetters() + " " + rocketMqLetters + " (expected " + rocketMqPoison + ")"));
        boolean refundedOnce = refunds.keySet().equals(scenario.poison()) && refunds.values().stream().allMatch(n -> n == 1)
                && refundEvents.keySet().equals(scenario.poison()) && refundEvents.values().stream().allMatch(n -> n == 1);
        checks.add(new Check("every poison order refunded once (one row, one event), no other", refundedOnce,
                "refund rows " + refunds + ", events " + refundEvents));
        return new Report(lines, checks);
    }

    private static Long toLong(Integer value) {
        return value == null ? null : value.longValue();
    }

    private static String sample(List<String> ids) {
        return ids.isEmpty() ? "" : " (e.g. " + ids.stream().limit(3).collect(Collectors.joining(", ")) + ")";
    }

    void print(PrintStream out) {
        lines.forEach(line -> out.println("  " + line));
        out.println();
        for (Check check : checks) {
            out.println("  [" + (check.holds() ? " ok " : "FAIL") + "] " + check.invariant()
                    + (check.holds() ? "" : ": " + check.detail()));
        }
        out.println();
        out.println(pass() ? "  PASS: every order's effect happened once, every poison order was dead-lettered and refunded once."
                : "  FAIL: the stock or the dead letters are not what the orders say (see the checks above).");
    }
}
